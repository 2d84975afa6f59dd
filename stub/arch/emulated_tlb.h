// QEMU's TCG, which CI kernel testers and most emulated boots run on, translates every guest
// memory access through a software TLB of its own per vCPU: direct-mapped, 4 KiB entries, resized
// only when the guest flushes its TLB (it doubles when more than 70 % of its entries were filled
// since the last flush, from 256 after reset). A CPU that decodes without a flush keeps the size
// its last flush left: an AP fresh from INIT decodes with 256 entries (1 MiB), and a large frame
// then takes it much longer than the same frame on the boot CPU (doc/benchmark-history.md, "Figures the code rests on"). Growing it first
// costs a few thousand writes; real CPUs and KVM are left alone.
#pragma once

#include <stdint.h>

namespace kpack {

// CPUID says hypervisor, and leaf 0x40000000 names QEMU's TCG ("TCGTCGTCGTCG").
bool under_qemu_tcg();

// Under TCG: touches page after page of `ram` with a write that changes nothing (RAM that is the
// caller's, other CPUs may be writing it), flushing the TLB after each round, until the software
// TLB has an entry for every 4 KiB of four times `working_set` (direct-mapped: the spare entries
// keep conflicts rare), at most kEmulatedTlbEntries, or `ram` runs out. Returns the pages touched
// (0 elsewhere). lz4's 1 MiB frames ask for 4,096 entries; zstd's larger frames, their source and the
// codec state for all of them.
inline constexpr uint64_t kEmulatedTlbEntries = 8192;  // 32 MiB
uint64_t grow_emulated_tlb(uint8_t* ram, uint64_t size, uint64_t working_set);

}  // namespace kpack
