// What boot64.S defines, and the common path's C++ entry that entry64.S calls (stub_main.cc).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "stub/boot/handover.h"
#include "stub/runtime/asm_linkage.h"

extern "C" {

// boot64.S: loads the boot GDT and its selectors.
void load_boot_gdt() KPACK_ASM_SYMBOL;
// boot64.S: the 64-bit boot protocol's state, then the kernel (the confidential-VM EFI path).
[[noreturn]] void enter_kernel(uint64_t entry, kpack::boot::BootParams* params) KPACK_ASM_SYMBOL;
// boot64.S: the template of the paging-level switch, and its far jump (opcode, offset, selector).
extern const uint8_t level_switch_start[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_far_jump[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_end[] KPACK_ASM_SYMBOL;

// stub_main.cc, from entry64.S once on the stub's identity map and relocated: `entry` says which
// entry ran (RunEntry), `firmware` is what an EFI entry kept from the firmware (null for the
// others). Returns the kernel's entry point, or halts.
uint64_t stub_entry(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::PackerRecord* record,
                    uint32_t entry, const kpack::FirmwareFacts* firmware) KPACK_ASM_SYMBOL;

}  // extern "C"
