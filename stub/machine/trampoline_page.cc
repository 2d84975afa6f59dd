#include "stub/machine/trampoline_page.h"

#include "stub/machine/reserved_memory.h"

namespace kpack {

namespace {

constexpr uint64_t kTableBytes = 4096;
constexpr uint64_t kTableAddressMask = 0x000FFFFFFFFFF000ull;
constexpr uint64_t kPresentWritable = 0x3;

}  // namespace

bool find_trampoline_page(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                          uint64_t* page) {
  return find_low_pages(params, params_addr, env, image, kTrampolinePageSize, page);
}

bool find_low_pages(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                    uint64_t size, uint64_t* base) {
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
  if (env.low_loader_data_overflow) return false;
  for (uint32_t i = 0; i < env.low_loader_data_count; ++i)
    if (!low.remove(env.low_loader_data[i]).ok()) return false;
  if (env.command_line_memory && !remove_reserved_memory(*env.command_line_memory, low).ok()) return false;
  if (params_addr < kTrampolineCeiling) {
    // The segment may start up to 64 KiB below boot_params and need not be 64 KiB aligned.
    uint64_t base = params_addr > kRealModeSegmentSize ? params_addr - kRealModeSegmentSize : 0;
    if (!low.remove(Range{base, params_addr + kRealModeSegmentSize}).ok()) return false;
  }
  return low.highest_fit(align_up(size, kTrampolinePageSize), kTrampolinePageSize, base);
}

bool wants_five_level_paging(bool kernel_five_level, bool cpu_has_la57, bool no5lvl) {
  return kernel_five_level && cpu_has_la57 && !no5lvl;
}

bool build_switched_root(PhysicalMemory& memory, uint64_t current_root, bool to_five_levels, uint64_t new_root) {
  auto* root = reinterpret_cast<uint64_t*>(memory.writable(new_root, kTableBytes));
  if (!root || new_root + kTableBytes > (1ull << 32)) return false;
  if (to_five_levels) {
    __builtin_memset(root, 0, kTableBytes);
    root[0] = (current_root & kTableAddressMask) | kPresentWritable;
    return true;
  }
  const auto* pml5 = reinterpret_cast<const uint64_t*>(memory.readable(current_root & kTableAddressMask, 8));
  if (!pml5) return false;
  const uint8_t* pml4 = memory.readable(pml5[0] & kTableAddressMask, kTableBytes);
  if (!pml4 || !(pml5[0] & 1)) return false;
  __builtin_memmove(root, pml4, kTableBytes);
  return true;
}

}  // namespace kpack
