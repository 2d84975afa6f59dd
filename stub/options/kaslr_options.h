// What the kernel command line says about where the kernel may go, read as the stock decompressor
// reads it (arch/x86/boot/compressed/kaslr.c): nokaslr, mem=, memmap=, hugepagesz=1G hugepages=N.
#pragma once

#include <stdint.h>

#include "stub/base/range.h"

namespace kpack {

// MAXMEM with 4-level paging: the kernel's direct map ends at 64 TiB.
inline constexpr uint64_t kMaxPhysicalAddress = 1ull << 46;
inline constexpr uint32_t kMaxMemmapRegions = 4;

// Ranges the kernel will not treat as its RAM, from memmap=: every region but nn@ss (nn#ss ACPI
// data, nn$ss reserved, nn!ss persistent memory, nn%ss a type change), and with memmap=exactmap
// the nn@ss regions as the only RAM. The stub writes nothing there (stub/machine/reserved_memory.h):
// ramoops keeps the last boot's crash log in such a region, pmem a file system.
inline constexpr uint32_t kMaxReservedRanges = 32;
struct MemoryReservations {
  Range reserved[kMaxReservedRanges];
  uint32_t reserved_count = 0;
  bool exactmap = false;
  Range exact_ram[kMaxReservedRanges];
  uint32_t exact_ram_count = 0;
  bool overflow = false;  // more of either than the arrays hold
};

// What the kernel command line says about placement.
struct KaslrOptions {
  bool disabled = false;                        // nokaslr
  uint64_t memory_limit = kMaxPhysicalAddress;  // mem=nn, memmap=nn
  // The memmap=nn#ss, nn$ss and nn!ss regions the stock decompressor's KASLR counts (up to four;
  // their ranges are in `memory`): with more, it randomizes no physical address, and neither does kpack.
  uint32_t kaslr_memmap_count = 0;
  bool too_many_memmaps = false;
  uint64_t gigantic_pages = 0;  // hugepagesz=1G hugepages=N keeps N 1 GiB pages free
  MemoryReservations memory;    // what the stub itself writes none of, with memory_limit
};

KaslrOptions parse_kaslr_options(const char* command_line, uint64_t length);

}  // namespace kpack
