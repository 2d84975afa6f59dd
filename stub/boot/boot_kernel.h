// The one boot path, from any entry's BootInputs to the kernel: the environment boot_params
// describe, the options (parsed once), KASLR drawn, the kernel decoded straight to where it runs,
// the paging mode it wants, the run report, and the jump into it. What differs between the
// machines it runs on is the platform's (boot_platform.h).
#pragma once

#include "stub/base/status.h"
#include "stub/boot/boot_platform.h"
#include "stub/entry/boot_inputs.h"
#include "stub/options/stub_options.h"

namespace kpack {

// Enters the kernel; returns only the failure a platform hands back (the firmware's, before it
// is left).
StubStatus boot_kernel(const BootInputs& inputs, BootPlatform& platform);

// A boot that failed, once the options are known: the error line on COM1, then a halt, or with
// panic=N (N > 0) a reset after N seconds, so that an unattended machine reaches its boot loader's
// fallback (a trial boot's stock kernel). panic=0 and panic=-1 halt, as every boot did before.
[[noreturn]] void stop_boot(StubStatus status, const StubOptions& options);

}  // namespace kpack
