// What boot64.S defines, and the boot path's C++ entry that entry64.S calls (bare_metal.cc).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "stub/entry/boot_inputs.h"
#include "stub/runtime/asm_linkage.h"

extern "C" {

// boot64.S: loads the boot GDT and its selectors.
void load_boot_gdt() KPACK_ASM_SYMBOL;
// boot64.S: the one jump into the kernel, with the 64-bit boot protocol's state.
[[noreturn]] void enter_kernel(uint64_t entry, kpack::boot::BootParams* params) KPACK_ASM_SYMBOL;
// boot64.S: calls `run(arg)` on the boot stack (entry_asm.h), which it never returns from.
[[noreturn]] void run_on_boot_stack(void (*run)(void* arg), void* arg) KPACK_ASM_SYMBOL;
// boot64.S: the template of the paging-level switch, and its far jump (opcode, offset, selector).
extern const uint8_t level_switch_start[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_far_jump[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_end[] KPACK_ASM_SYMBOL;

// bare_metal.cc, from entry64.S once prepare_boot_inputs has returned: the boot path on bare metal.
[[noreturn]] void boot_from_entry(const kpack::BootInputs* inputs) KPACK_ASM_SYMBOL;

}  // extern "C"
