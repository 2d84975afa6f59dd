#include "relocation_table.h"

#include "formats/le.h"

namespace kpack {
namespace {

uint32_t word_at(const RelocationTable& table, uint64_t i) { return load_le<uint32_t>(table.words + 4 * i); }

// The link-time physical address an entry names: sign-extended to the kernel's virtual address,
// then taken back to physical through __START_KERNEL_map (per-CPU places included: relocs
// writes them at their load address).
uint64_t physical_target(uint32_t entry) {
  uint64_t virtual_address = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(entry)));
  return virtual_address - kStartKernelMap;
}

// Where each file-backed segment is, once placed, for the checks and the writes.
struct PlacedSegments {
  uint8_t* bytes[kMaxLoadSegments];
};

// The segment holding [target, target + width) of link-time physical addresses, or -1.
int segment_holding(const KernelHeaders& k, uint64_t target, uint64_t width) {
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    if (target >= s.paddr && s.filesz >= width && target - s.paddr <= s.filesz - width) return static_cast<int>(i);
  }
  return -1;
}

// Visits every entry of [begin, end) with its width; stops at the first error.
template <typename Visit>
StubStatus for_each_entry(const RelocationTable& table, const KernelHeaders& k, uint64_t begin, uint64_t end,
                          uint64_t width, Visit visit) {
  int hint = -1;
  for (uint64_t i = begin; i < end; ++i) {
    uint64_t target = physical_target(word_at(table, i));
    // Lists are sorted, so consecutive entries mostly fall in the same segment.
    const LoadSegment* s = hint >= 0 ? &k.segments[hint] : nullptr;
    if (!s || target < s->paddr || s->filesz < width || target - s->paddr > s->filesz - width) {
      hint = segment_holding(k, target, width);
      if (hint < 0) return fail("relocation target outside the kernel", target + kStartKernelMap, width);
    }
    visit(static_cast<uint32_t>(hint), target - k.segments[hint].paddr);
  }
  return StubStatus::success();
}

}  // namespace

StubStatus parse_relocation_table(const uint8_t* bytes, uint64_t size, RelocationTable* out) {
  if (size % 4) return fail("relocation table size is not a multiple of 4", size);
  uint64_t words = size / 4;
  RelocationTable t;
  t.words = bytes;
  if (words == 0 || load_le<uint32_t>(bytes) != 0) return fail("relocation table does not start with a 0 word", size);
  uint64_t zeros[3] = {0, 0, 0};
  uint32_t count = 0;
  for (uint64_t i = 0; i < words; ++i) {
    if (word_at(t, i) != 0) continue;
    if (count == 3) return fail("relocation table has more than three 0 words", i);
    zeros[count++] = i;
  }
  if (count == 3) {
    t.format = RelocationFormat::kWithInverse32;
    t.list64_begin = zeros[0] + 1, t.list64_end = zeros[1];
    t.inverse32_begin = zeros[1] + 1, t.inverse32_end = zeros[2];
    t.list32_begin = zeros[2] + 1, t.list32_end = words;
  } else if (count == 2) {
    t.format = RelocationFormat::kWithoutInverse32;
    t.list64_begin = zeros[0] + 1, t.list64_end = zeros[1];
    t.inverse32_begin = t.inverse32_end = zeros[1];
    t.list32_begin = zeros[1] + 1, t.list32_end = words;
  } else {
    return fail("relocation table has neither two nor three 0 words", count);
  }
  *out = t;
  return StubStatus::success();
}

StubStatus relocate_kernel(const RelocationTable& table, const KernelHeaders& k, uint64_t base, uint64_t delta,
                           PhysicalMemory& memory) {
  if (delta == 0) return StubStatus::success();
  PlacedSegments placed{};
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    if (!s.filesz) continue;
    placed.bytes[i] = memory.writable(base + (s.paddr - k.physical.begin), s.filesz);
    if (!placed.bytes[i]) return fail("kernel segment is not writable for relocation", s.paddr, s.filesz);
  }
  auto check = [](uint32_t, uint64_t) {};
  KPACK_TRY(for_each_entry(table, k, table.list64_begin, table.list64_end, 8, check));
  KPACK_TRY(for_each_entry(table, k, table.inverse32_begin, table.inverse32_end, 4, check));
  KPACK_TRY(for_each_entry(table, k, table.list32_begin, table.list32_end, 4, check));

  // All targets are inside the kernel: now patch.
  KPACK_TRY(for_each_entry(table, k, table.list64_begin, table.list64_end, 8, [&](uint32_t s, uint64_t at) {
    store_le<uint64_t>(placed.bytes[s] + at, load_le<uint64_t>(placed.bytes[s] + at) + delta);
  }));
  KPACK_TRY(for_each_entry(table, k, table.inverse32_begin, table.inverse32_end, 4, [&](uint32_t s, uint64_t at) {
    store_le<uint32_t>(placed.bytes[s] + at, load_le<uint32_t>(placed.bytes[s] + at) - static_cast<uint32_t>(delta));
  }));
  KPACK_TRY(for_each_entry(table, k, table.list32_begin, table.list32_end, 4, [&](uint32_t s, uint64_t at) {
    store_le<uint32_t>(placed.bytes[s] + at, load_le<uint32_t>(placed.bytes[s] + at) + static_cast<uint32_t>(delta));
  }));
  return StubStatus::success();
}

}  // namespace kpack
