// KASLR as the stock decompressor does it (arch/x86/boot/compressed/kaslr.c), in the engine so the
// host can test it: what the command line asks for, a uniformly drawn 2 MiB-aligned physical slot
// in free memory, a random virtual offset in the kernel's 1 GiB window, and the mixing of whatever
// entropy the stub gathered into the random numbers that pick them.
#pragma once

#include <stdint.h>

#include "stub/machine/free_memory.h"
#include "stub/base/entropy_mix.h"  // for the callers that draw KASLR's numbers
#include "stub/base/range.h"
#include "stub/options/kaslr_options.h"

namespace kpack {

// The number of `alignment`-aligned addresses a >= floor with [a, a + size) free and below `limit`.
uint64_t count_slots(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit);

// Slot number `index` (< count_slots) of the same set, in address order.
uint64_t slot_address(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit,
                      uint64_t index);

// Removes what the options keep away from a random kernel: memmap= regions, RAM at or above the
// memory limit, and the first `gigantic_pages` free 1 GiB-aligned gigabytes.
StubStatus apply_kaslr_options(const KaslrOptions& options, FreeMemory& free);

// How far the kernel's image may reach above __START_KERNEL_map with KASLR (KERNEL_IMAGE_SIZE).
inline constexpr uint64_t kKernelImageSize = 1ull << 30;

// The virtual offset (a multiple of 2 MiB, added to the link-time virtual base) of a kernel linked
// at `link_address` spanning `span` bytes, drawn from `random`: [0, 1 GiB - link_address - span].
// `slots` receives how many there were to choose from.
uint64_t random_virtual_offset(uint64_t link_address, uint64_t span, uint64_t random, uint64_t* slots);

}  // namespace kpack
