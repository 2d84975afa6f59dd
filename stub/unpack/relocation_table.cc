#include "stub/unpack/relocation_table.h"

#include "formats/le.h"

namespace kpack {
namespace {

// The file-backed parts of the segments, in link-time physical order: relocation targets must lie
// inside one of them.
struct FileBacked {
  Range ranges[kMaxLoadSegments];
  uint32_t count = 0;

  explicit FileBacked(const KernelHeaders& k) {
    for (uint32_t i = 0; i < k.segment_count; ++i) {
      if (!k.segments[i].filesz) continue;
      Range r = range_of(k.segments[i].paddr, k.segments[i].filesz);
      uint32_t at = count++;
      while (at > 0 && ranges[at - 1].begin > r.begin) {
        ranges[at] = ranges[at - 1];
        --at;
      }
      ranges[at] = r;
    }
  }
};

}  // namespace

// Finds the 0 words that split the lists (relocate_kernel checks the targets in its own pass).
StubStatus parse_relocation_table(const uint8_t* bytes, uint64_t size, RelocationTable* out) {
  constexpr uint32_t kMostZeros = relocation_zero_words(RelocationFormat::kWithInverse32);
  if (size % kRelocationWordSize) return fail("relocation table size is not a multiple of 4", size);
  uint64_t words = size / kRelocationWordSize;
  if (words == 0 || load_le<uint32_t>(bytes) != kRelocationListStart)
    return fail("relocation table does not start with a 0 word", size);
  uint64_t zeros[kMostZeros] = {0, 0, 0};
  uint32_t count = 1;
  for (uint64_t i = 1; i < words; ++i) {
    uint32_t entry = load_le<uint32_t>(bytes + kRelocationWordSize * i);
    if (entry == kRelocationListStart) {
      if (count == kMostZeros) return fail("relocation table has more than three 0 words", i);
      zeros[count++] = i;
    }
  }
  RelocationTable t;
  t.words = bytes;
  if (count == relocation_zero_words(RelocationFormat::kWithInverse32)) {
    t.format = RelocationFormat::kWithInverse32;
    t.list64_begin = zeros[0] + 1, t.list64_end = zeros[1];
    t.inverse32_begin = zeros[1] + 1, t.inverse32_end = zeros[2];
    t.list32_begin = zeros[2] + 1, t.list32_end = words;
  } else if (count == relocation_zero_words(RelocationFormat::kWithoutInverse32)) {
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

namespace {

enum class Patch { kAdd64, kSubtract32, kAdd32 };

// Patches the entries from `first` towards `limit` (exclusive) in steps of `step` words, checking
// each target before writing it, until a 0 word or the limit; returns where it stopped. With
// `undo` it reverts instead. A bad target sets `*status` and stops there, unpatched.
struct ListPatcher {
  const uint8_t* words;
  const FileBacked& backed;
  uint8_t* kernel_at;  // + link-time physical address = where it is now
  uint64_t delta;

  int64_t run(int64_t first, int64_t limit, int64_t step, Patch patch, bool undo, StubStatus* status) const {
    uint64_t add = undo ? 0 - delta : delta;
    // One loop per kind and direction, so the loop body has no decisions left but the range check.
    switch (patch) {
      case Patch::kAdd64:
        return step > 0 ? loop<Patch::kAdd64, 1>(first, limit, add, status)
                        : loop<Patch::kAdd64, -1>(first, limit, add, status);
      case Patch::kAdd32:
        return step > 0 ? loop<Patch::kAdd32, 1>(first, limit, add, status)
                        : loop<Patch::kAdd32, -1>(first, limit, add, status);
      case Patch::kSubtract32:
        return step > 0 ? loop<Patch::kSubtract32, 1>(first, limit, add, status)
                        : loop<Patch::kSubtract32, -1>(first, limit, add, status);
    }
    return first;
  }

  template <Patch kPatch, int kStep>
  int64_t loop(int64_t first, int64_t limit, uint64_t add, StubStatus* status) const {
    constexpr uint64_t kWidth = kPatch == Patch::kAdd64   ? kRelocation64Width
                                : kPatch == Patch::kAdd32 ? kRelocation32Width
                                                          : kRelocationInverse32Width;
    uint64_t lo = 1, hi = 0;
    int64_t i = first;
    for (; i != limit; i += kStep) {
      uint32_t entry = load_le<uint32_t>(words + kRelocationWordSize * i);
      uint64_t target = physical_target(entry);
      if (target < lo || target > hi || entry == kRelocationListStart) {
        if (entry == kRelocationListStart) break;
        uint32_t r = 0;
        while (r < backed.count && !(target >= backed.ranges[r].begin && backed.ranges[r].size() >= kWidth &&
                                     target - backed.ranges[r].begin <= backed.ranges[r].size() - kWidth))
          ++r;
        if (r == backed.count) {
          *status = fail("relocation target outside the kernel", target + kStartKernelMap, kWidth);
          break;
        }
        lo = backed.ranges[r].begin;
        hi = backed.ranges[r].end - kWidth;
      }
      uint8_t* p = kernel_at + target;
      if constexpr (kPatch == Patch::kAdd64)
        store_le<uint64_t>(p, load_le<uint64_t>(p) + add);
      else if constexpr (kPatch == Patch::kAdd32)
        store_le<uint32_t>(p, load_le<uint32_t>(p) + static_cast<uint32_t>(add));
      else
        store_le<uint32_t>(p, load_le<uint32_t>(p) - static_cast<uint32_t>(add));
    }
    return i;
  }
};

}  // namespace

// One pass, as the stock decompressor reads the table: the 64-bit list forward from the leading 0
// up to the next 0, the 32-bit list backward from the end down to a 0, and whatever lies between
// those two 0 words is the inverse list (up to 6.14) or nothing (6.15 on). Each target is checked
// before it is written; at the first bad one, everything already patched is reverted, newest
// first, so the kernel is left exactly as it was.
StubStatus relocate_kernel(const uint8_t* bytes, uint64_t size, const KernelHeaders& k, uint64_t base, uint64_t delta,
                           PhysicalMemory& memory, RelocationTable* applied) {
  if (delta == 0) return parse_relocation_table(bytes, size, applied);
  if (size % kRelocationWordSize) return fail("relocation table size is not a multiple of 4", size);
  int64_t words = static_cast<int64_t>(size / kRelocationWordSize);
  if (words == 0 || load_le<uint32_t>(bytes) != kRelocationListStart)
    return fail("relocation table does not start with a 0 word", size);
  FileBacked backed(k);
  uint8_t* kernel = memory.writable(base, k.span());
  if (!kernel) return fail("kernel is not writable for relocation", base, k.span());
  ListPatcher patcher{bytes, backed, kernel - k.physical.begin, delta};

  struct Done {
    int64_t first, stop, step;
    Patch patch;
  } done[3];
  uint32_t lists = 0;
  StubStatus status = StubStatus::success();
  auto patch = [&](int64_t first, int64_t limit, int64_t step, Patch kind) {
    int64_t stop = patcher.run(first, limit, step, kind, false, &status);
    done[lists++] = {first, stop, step, kind};
    return stop;
  };
  int64_t end64 = patch(1, words, 1, Patch::kAdd64);
  if (status.ok() && end64 == words) status = fail("relocation table has neither two nor three 0 words", 1);
  int64_t zero32 = status.ok() ? patch(words - 1, end64, -1, Patch::kAdd32) : 0;
  if (status.ok() && zero32 > end64 && patch(end64 + 1, zero32, 1, Patch::kSubtract32) != zero32 && status.ok())
    status = fail("relocation table has more than three 0 words", done[2].stop);
  if (!status.ok()) {
    for (uint32_t l = lists; l-- > 0;) {
      const Done& d = done[l];
      StubStatus ignored;
      patcher.run(d.stop - d.step, d.first - d.step, -d.step, d.patch, true, &ignored);
    }
    return status;
  }
  RelocationTable t;
  t.words = bytes;
  t.format = zero32 > end64 ? RelocationFormat::kWithInverse32 : RelocationFormat::kWithoutInverse32;
  t.list64_begin = 1, t.list64_end = static_cast<uint64_t>(end64);
  t.inverse32_begin = static_cast<uint64_t>(zero32 > end64 ? end64 + 1 : end64);
  t.inverse32_end = static_cast<uint64_t>(zero32);
  t.list32_begin = static_cast<uint64_t>(zero32 + 1), t.list32_end = static_cast<uint64_t>(words);
  *applied = t;
  return StubStatus::success();
}

}  // namespace kpack
