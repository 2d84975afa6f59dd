// Every symbol that crosses the boundary between the assembly (entry32.S, entry64.S, stub.ld) and
// the C++ of the stub, in the order entry64.S uses them. Each is extern "C" and hidden: the stub is
// one static PIE, reached RIP-relative.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "stub/boot/handover.h"
#include "stub/entry/paging.h"

#define KPACK_ASM_SYMBOL __attribute__((visibility("hidden")))

extern "C" {

// stub.ld: where the stub ends and the packer's record begins, and the stub's own relocations.
extern uint8_t __stub_end[] KPACK_ASM_SYMBOL;
extern const uint8_t __rela_start[] KPACK_ASM_SYMBOL;
extern const uint8_t __rela_end[] KPACK_ASM_SYMBOL;
// stub.ld: the libraries' static constructors.
extern void (*const __init_array_start[])() KPACK_ASM_SYMBOL;
extern void (*const __init_array_end[])() KPACK_ASM_SYMBOL;

// entry32.S: the start of the protected-mode part, i.e. where the loader put the image.
extern uint8_t startup_32[] KPACK_ASM_SYMBOL;

// First, before relocation and SSE (exceptions.cc): the IDT, so a #VC or #VE in a confidential VM
// ends in a reason instead of a reset.
void install_exception_handlers() KPACK_ASM_SYMBOL;

// entry64.S: the boot CPU's stack on the boot-protocol entries, zeros in the image file.
extern uint8_t boot_stack[] KPACK_ASM_SYMBOL;
extern uint8_t boot_stack_top[] KPACK_ASM_SYMBOL;

// Before relocation (early_packer_record.cc): the checked record, or an error line and a halt.
const kpack::PackerRecord* checked_packer_record(uint8_t* image_base) KPACK_ASM_SYMBOL;

// Before relocation (paging.cc): the stub's identity map; returns CR3, or halts with an error line
// when the windows above 4 GiB do not fit.
extern kpack::PageTables stub_page_tables KPACK_ASM_SYMBOL;
uint64_t build_identity_map(kpack::PageTables* tables, uint64_t image_base, const kpack::boot::BootParams* params,
                            uint64_t image_size) KPACK_ASM_SYMBOL;

// stack_protector.cc: the block %fs points at (canary at %fs:0x28).
extern uint64_t stub_tls[8] KPACK_ASM_SYMBOL;

// self_relocation.cc: applies the stub's R_X86_64_RELATIVE relocations for `base`.
void apply_relocations(uint8_t* base) KPACK_ASM_SYMBOL;

// main.cc: set by entry32.S, so the run report can tell the 32-bit entry from the 64-bit one.
extern uint8_t entered_at_startup_32 KPACK_ASM_SYMBOL;

// main.cc: unpacks the kernel; returns its physical entry point, or halts.
uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base,
                   const kpack::PackerRecord* record) KPACK_ASM_SYMBOL;

// smp/ap_trampoline16.S: the application processors' trampoline, copied below 1 MiB; the labels
// of its 32- and 64-bit parts locate its far jumps' targets in the copy.
extern const uint8_t ap_trampoline_start[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_code32[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_code64[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_end[] KPACK_ASM_SYMBOL;

// boot64.S: the template of the paging-level switch, and its far jump (opcode, offset, selector).
extern const uint8_t level_switch_start[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_far_jump[] KPACK_ASM_SYMBOL;
extern const uint8_t level_switch_end[] KPACK_ASM_SYMBOL;
// boot64.S: loads the boot GDT and its selectors.
void load_boot_gdt() KPACK_ASM_SYMBOL;

}  // extern "C"
