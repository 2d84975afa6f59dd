// The bare-metal platform's way in for the EFI entries (the boot-protocol entries come through
// entry64.S and boot_from_entry, boot_asm.h).
#pragma once

#include "stub/entry/boot_inputs.h"

namespace kpack {

// After ExitBootServices, on the firmware's stack and page tables: the stub's own GDT, exception
// handlers, boot stack and identity map, then the one boot path with the application processors.
// `inputs` are copied before anything is decoded: the firmware's memory is now the kernel's.
[[noreturn]] void boot_after_firmware(const BootInputs& inputs);

}  // namespace kpack
