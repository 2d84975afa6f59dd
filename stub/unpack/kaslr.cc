#include "stub/unpack/kaslr.h"

#include "formats/le.h"
#include "stub/machine/reserved_memory.h"

namespace kpack {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kVirtualAlignment = 2ull << 20;

}  // namespace

uint64_t count_slots(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit) {
  uint64_t slots = 0;
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range r = free.at(i);
    if (r.end > limit) r.end = limit;
    uint64_t first = align_up(r.begin > floor ? r.begin : floor, alignment);
    if (first < r.begin || first >= r.end || r.end - first < size) continue;
    slots += (r.end - first - size) / alignment + 1;
  }
  return slots;
}

uint64_t slot_address(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit,
                      uint64_t index) {
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range r = free.at(i);
    if (r.end > limit) r.end = limit;
    uint64_t first = align_up(r.begin > floor ? r.begin : floor, alignment);
    if (first < r.begin || first >= r.end || r.end - first < size) continue;
    uint64_t here = (r.end - first - size) / alignment + 1;
    if (index < here) return first + index * alignment;
    index -= here;
  }
  return 0;
}

StubStatus apply_kaslr_options(const KaslrOptions& options, FreeMemory& free) {
  // On the stub's way these are gone already (keep_command_line_memory); the host's placement
  // report and the tests come here with a free set that still holds them.
  KPACK_TRY(remove_reserved_memory(options, free));
  // The kernel reserves its 1 GiB pages early, from the lowest aligned gigabytes of RAM.
  uint64_t pages = options.gigantic_pages;
  for (uint32_t i = 0; i < free.count() && pages;) {
    Range r = free.at(i);
    uint64_t first = align_up(r.begin, kGiB);
    if (first < r.begin || first >= r.end || r.end - first < kGiB) {
      ++i;
      continue;
    }
    uint64_t here = (r.end - first) / kGiB;
    if (here > pages) here = pages;
    pages -= here;
    KPACK_TRY(free.remove(Range{first, first + here * kGiB}));
    // The ranges shifted; start over from the same index, which now holds what lay below `first`.
    if (first > r.begin) ++i;
  }
  return StubStatus::success();
}

uint64_t random_virtual_offset(uint64_t link_address, uint64_t span, uint64_t random, uint64_t* slots) {
  *slots = 0;
  if (link_address > kKernelImageSize || span > kKernelImageSize - link_address) return 0;
  *slots = (kKernelImageSize - link_address - span) / kVirtualAlignment + 1;
  return random % *slots * kVirtualAlignment;
}

}  // namespace kpack
