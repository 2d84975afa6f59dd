// Half-open physical address ranges and the overflow-safe arithmetic the placement code needs.
#pragma once

#include <stdint.h>

namespace kpack {

struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;  // exclusive

  constexpr uint64_t size() const { return end - begin; }
  constexpr bool empty() const { return end <= begin; }
  constexpr bool overlaps(Range other) const { return begin < other.end && other.begin < end; }
  constexpr bool contains(Range other) const { return begin <= other.begin && other.end <= end; }
};

// [begin, begin + size) or an empty range when that would wrap around.
constexpr Range range_of(uint64_t begin, uint64_t size) {
  if (begin + size < begin) return Range{};
  return Range{begin, begin + size};
}

constexpr uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }
constexpr uint64_t align_down(uint64_t value, uint64_t alignment) { return value & ~(alignment - 1); }
constexpr bool is_power_of_two(uint64_t value) { return value && !(value & (value - 1)); }

}  // namespace kpack
