// What entry32.S and entry64.S define, and the entry's C++ that entry64.S calls before the stub
// relocates itself (in the order it calls them).
#pragma once

#include <stdint.h>

#include "stub/entry/boot_inputs.h"
#include "stub/runtime/asm_linkage.h"

extern "C" {

// entry32.S: the start of the protected-mode part, i.e. where the loader put the image.
extern uint8_t startup_32[] KPACK_ASM_SYMBOL;
// entry64.S: the boot CPU's stack, zeros in the image file; the EFI entries move to it once they
// have left boot services (the firmware's stack is then free memory).
extern uint8_t boot_stack[] KPACK_ASM_SYMBOL;
extern uint8_t boot_stack_top[] KPACK_ASM_SYMBOL;

// exceptions.cc, first, before SSE: the IDT, so a #VC or #VE in a confidential VM ends in a reason
// instead of a reset.
void install_exception_handlers() KPACK_ASM_SYMBOL;
// boot_protocol_entry.cc: the BootInputs of a boot-protocol or PVH entry (`rsi`: boot_params, or
// PVH's hvm_start_info; `entry`: RunEntry), the record checked, the stub on its own identity map
// and relocated; or an error line and a halt.
void prepare_boot_inputs(uint64_t rsi, uint32_t entry, kpack::BootInputs* inputs) KPACK_ASM_SYMBOL;

}  // extern "C"
