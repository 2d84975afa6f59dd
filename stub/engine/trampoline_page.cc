#include "stub/engine/trampoline_page.h"

namespace kpack {

bool find_trampoline_page(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                          uint64_t* page) {
  const Range window{kTrampolineFloor, kTrampolineCeiling};
  FreeMemory low;
  uint32_t entries = params.e820_entries <= boot::kE820MaxEntries ? params.e820_entries : 0;
  for (uint32_t i = 0; i < entries; ++i) {
    const boot::E820Entry& e = params.e820_table[i];
    Range r = range_of(e.addr, e.size);
    if (e.type != boot::kE820Ram || !r.overlaps(window)) continue;
    if (r.begin < window.begin) r.begin = window.begin;
    if (r.end > window.end) r.end = window.end;
    r = Range{align_up(r.begin, kTrampolinePageSize), align_down(r.end, kTrampolinePageSize)};
    if (!r.empty() && !low.add(r).ok()) return false;
  }
  // Entries of other types win where the map overlaps itself, as for the memory above 1 MiB.
  for (uint32_t i = 0; i < entries; ++i) {
    const boot::E820Entry& e = params.e820_table[i];
    if (e.type != boot::kE820Ram && !low.remove(range_of(e.addr, e.size)).ok()) return false;
  }
  Range live[] = {
      image,
      range_of(params_addr, sizeof(boot::BootParams)),
      env.command_line,
      env.initrd,
  };
  for (Range r : live)
    if (!r.empty() && !low.remove(r).ok()) return false;
  if (params_addr < kTrampolineCeiling) {
    // The segment may start up to 64 KiB below boot_params and need not be 64 KiB aligned.
    uint64_t base = params_addr > kRealModeSegmentSize ? params_addr - kRealModeSegmentSize : 0;
    if (!low.remove(Range{base, params_addr + kRealModeSegmentSize}).ok()) return false;
  }
  return low.highest_fit(kTrampolinePageSize, kTrampolinePageSize, page);
}

}  // namespace kpack
