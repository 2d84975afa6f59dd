#include "stub/machine/free_memory.h"

namespace kpack {

StubStatus FreeMemory::add(Range range) {
  if (range.empty()) return StubStatus::success();
  // Absorb every range that overlaps or touches the new one, then insert it in order.
  uint32_t out = 0;
  uint32_t insert_at = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    Range r = ranges_[i];
    if (r.end >= range.begin && r.begin <= range.end) {
      if (r.begin < range.begin) range.begin = r.begin;
      if (r.end > range.end) range.end = r.end;
      continue;
    }
    if (r.end < range.begin) insert_at = out + 1;
    ranges_[out++] = r;
  }
  if (out == kCapacity) return fail("too many memory map entries", out);
  for (uint32_t i = out; i > insert_at; --i) ranges_[i] = ranges_[i - 1];
  ranges_[insert_at] = range;
  count_ = out + 1;
  return StubStatus::success();
}

StubStatus FreeMemory::remove(Range range) {
  if (range.empty()) return StubStatus::success();
  for (uint32_t i = 0; i < count_; ++i) {
    Range r = ranges_[i];
    if (!r.overlaps(range)) continue;
    Range left{r.begin, range.begin};
    Range right{range.end, r.end};
    if (!left.empty() && !right.empty()) {
      if (count_ == kCapacity) return fail("too many memory map entries", count_);
      for (uint32_t j = count_; j > i + 1; --j) ranges_[j] = ranges_[j - 1];
      ranges_[i] = left;
      ranges_[i + 1] = right;
      ++count_;
      ++i;
    } else if (!left.empty()) {
      ranges_[i] = left;
    } else if (!right.empty()) {
      ranges_[i] = right;
    } else {
      for (uint32_t j = i; j + 1 < count_; ++j) ranges_[j] = ranges_[j + 1];
      --count_;
      --i;
    }
  }
  return StubStatus::success();
}

bool FreeMemory::contains(Range range) const {
  for (uint32_t i = 0; i < count_; ++i)
    if (ranges_[i].contains(range)) return true;
  return range.empty();
}

bool FreeMemory::lowest_fit(uint64_t size, uint64_t alignment, uint64_t floor, uint64_t* address) const {
  for (uint32_t i = 0; i < count_; ++i) {
    Range r = ranges_[i];
    uint64_t start = align_up(r.begin > floor ? r.begin : floor, alignment);
    if (start < r.begin) continue;  // aligning wrapped around
    if (start <= r.end && r.end - start >= size) {
      *address = start;
      return true;
    }
  }
  return false;
}

bool FreeMemory::highest_fit(uint64_t size, uint64_t alignment, uint64_t* address) const {
  for (uint32_t i = count_; i-- > 0;) {
    Range r = ranges_[i];
    if (r.size() < size) continue;
    uint64_t start = align_down(r.end - size, alignment);
    if (start >= r.begin) {
      *address = start;
      return true;
    }
  }
  return false;
}

}  // namespace kpack
