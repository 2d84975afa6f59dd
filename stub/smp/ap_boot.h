// What the application processors' trampoline (ap_trampoline16.S) reads, at kApBootDataOffset in
// its page: the GDT and far pointers for the mode switches, the control registers the boot CPU
// runs with, and where each AP's stack and C++ entry are. The BSP fills it (smp.cc); the assembly
// reaches every field through offsets generated from this structure (stub/asm_offsets/gen_asm_offsets.cc).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "stub/arch/cpu.h"

namespace kpack::smp {

// Where the data block sits in the trampoline's page: the code before it, from offset 0 (where a
// START IPI begins execution).
inline constexpr uint32_t kApBootDataOffset = 0x800;

// The trampoline's GDT: the boot protocol's selectors (entry32.S's boot_gdt: BOOT_CS 0x10 64-bit
// code, BOOT_DS 0x18 flat data) plus, in the slot boot_gdt leaves unused, the 32-bit code segment
// the switch from real mode passes through.
inline constexpr uint16_t kApCode32Selector = 0x08;
inline constexpr uint64_t kApGdt[4] = {
    0,
    0x00CF9B000000FFFF,  // 0x08: 32-bit code, flat
    0x00AF9B000000FFFF,  // 0x10: BOOT_CS, 64-bit code
    0x00CF93000000FFFF,  // 0x18: BOOT_DS, flat data
};

// Protected mode with caching on: after INIT, CR0 has CD and NW set, and the trampoline writes
// CR0 whole so the AP does not run uncached.
inline constexpr uint32_t kApCr0Protected = kCr0Pe | kCr0Et;
// Long mode with SSE as entry64.S sets it up on the BSP (CR0.EM clear, CR0.MP set, CR4.OSFXSR and
// CR4.OSXMMEXCPT set): the codec libraries use SSE on every CPU.
inline constexpr uint32_t kApCr0Long = kCr0Pg | kCr0Ne | kCr0Et | kCr0Mp | kCr0Pe;
// The boot CPU's CR4.LA57 goes with them (smp.cc): the APs share its page tables.
inline constexpr uint32_t kApCr4 = kCr4Pae | kCr4Osfxsr | kCr4Osxmmexcpt;

// `stacks` until the boot CPU has stacks to hand out: the APs wait in 64-bit mode, on no stack.
inline constexpr uint32_t kApStacksPending = ~0u;
// Iterations of an empty loop between two reads of `stacks` (about a microsecond).
inline constexpr uint32_t kApWaitSpins = 1000;

struct [[gnu::packed]] FarPointer32 {
  uint32_t offset;
  uint16_t selector;
};

struct alignas(16) ApBootData {
  uint64_t gdt[4];
  uint16_t gdt_pad[3];  // puts gdt_limit at an offset of 6 mod 8, so gdt_base is aligned
  uint16_t gdt_limit;   // lgdt's operand: limit, then 32-bit base
  uint32_t gdt_base;
  FarPointer32 to_code32;  // real mode -> 32-bit code in this page
  uint16_t pad0;
  FarPointer32 to_code64;  // compatibility mode -> 64-bit code in this page
  uint16_t pad1;
  uint32_t cr0;
  uint32_t cr3;  // the BSP's page tables (below 4 GiB: loaded from 32-bit code)
  uint32_t cr4;
  uint32_t efer;        // bits ORed into EFER before paging is turned on
  uint32_t ticket;      // the next AP's stack number, taken with lock xadd
  uint32_t stacks;      // how many stacks there are (kApStacksPending: wait); a later ticket parks
  uint64_t stack_base;  // stack n's top is stack_base + (n + 1) * stack_size
  uint64_t stack_size;
  uint64_t entry;  // void ap_entry(uint32_t ticket), never returns
};
static_assert(offsetof(ApBootData, gdt_limit) % 8 == 6);
static_assert(kApBootDataOffset + sizeof(ApBootData) <= 4096);

}  // namespace kpack::smp
