// KASLR as the stock decompressor does it (arch/x86/boot/compressed/kaslr.c), in the engine so the
// host can test it: what the command line asks for, a uniformly drawn 2 MiB-aligned physical slot
// in free memory, a random virtual offset in the kernel's 1 GiB window, and the mixing of whatever
// entropy the stub gathered into the random numbers that pick them.
#pragma once

#include <stdint.h>

#include "stub/engine/free_memory.h"
#include "stub/engine/range.h"

namespace kpack {

// MAXMEM with 4-level paging: the kernel's direct map ends at 64 TiB.
inline constexpr uint64_t kMaxPhysicalAddress = 1ull << 46;
inline constexpr uint32_t kMaxMemmapRegions = 4;

// What the kernel command line says about placement.
struct KaslrOptions {
  bool disabled = false;                        // nokaslr
  uint64_t memory_limit = kMaxPhysicalAddress;  // mem=nn, memmap=nn
  Range avoid[kMaxMemmapRegions];               // memmap=nn#ss, nn$ss, nn!ss
  uint32_t avoid_count = 0;
  bool too_many_memmaps = false;  // more than four: no physical randomization
  uint64_t gigantic_pages = 0;    // hugepagesz=1G hugepages=N keeps N 1 GiB pages free
};

KaslrOptions parse_kaslr_options(const char* command_line, uint64_t length);

// The number of `alignment`-aligned addresses a >= floor with [a, a + size) free and below `limit`.
uint64_t count_slots(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit);

// Slot number `index` (< count_slots) of the same set, in address order.
uint64_t slot_address(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit,
                      uint64_t index);

// Removes what the options keep away from a random kernel: memmap= regions, RAM at or above the
// memory limit, and the first `gigantic_pages` free 1 GiB-aligned gigabytes.
StubStatus apply_kaslr_options(const KaslrOptions& options, FreeMemory& free);

// The virtual offset (a multiple of 2 MiB, added to the link-time virtual base) of a kernel linked
// at `link_address` spanning `span` bytes, drawn from `random`: [0, 1 GiB - link_address - span].
// `slots` receives how many there were to choose from.
uint64_t random_virtual_offset(uint64_t link_address, uint64_t span, uint64_t random, uint64_t* slots);

// Folds `size` bytes into a 64-bit state; the stub feeds boot_params, the SETUP_RNG_SEED node,
// RDRAND, RDTSC or the i8254 through it.
uint64_t mix_entropy(uint64_t state, const uint8_t* bytes, uint64_t size);
uint64_t mix_entropy(uint64_t state, uint64_t value);

}  // namespace kpack
