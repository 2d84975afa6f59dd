// What entry32.S and entry64.S define, and the entry's C++ that entry64.S calls before the stub
// relocates itself (in the order it calls them).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "stub/runtime/asm_linkage.h"

extern "C" {

// entry32.S: the start of the protected-mode part, i.e. where the loader put the image.
extern uint8_t startup_32[] KPACK_ASM_SYMBOL;
// entry64.S: the boot CPU's stack on the boot-protocol entries, zeros in the image file.
extern uint8_t boot_stack[] KPACK_ASM_SYMBOL;
extern uint8_t boot_stack_top[] KPACK_ASM_SYMBOL;

// exceptions.cc, first, before SSE: the IDT, so a #VC or #VE in a confidential VM ends in a reason
// instead of a reset.
void install_exception_handlers() KPACK_ASM_SYMBOL;
// early_packer_record.cc: the checked record, or an error line and a halt.
const kpack::PackerRecord* checked_packer_record(uint8_t* image_base) KPACK_ASM_SYMBOL;
// early_pvh.cc, on the PVH entry: boot_params made of hvm_start_info, or an error line and a halt.
kpack::boot::BootParams* boot_params_from_pvh(uint64_t start_info) KPACK_ASM_SYMBOL;
// self_relocation.cc: applies the stub's R_X86_64_RELATIVE relocations for `base`.
void apply_relocations(uint8_t* base) KPACK_ASM_SYMBOL;

}  // extern "C"
