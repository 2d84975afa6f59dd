// The set of physical memory the stub may use: usable e820 RAM minus everything that is live
// (the stub, the payload, boot_params, the command line, setup_data, the initrd). Placement asks
// it for the lowest or highest aligned fit.
#pragma once

#include <stdint.h>

#include "stub/base/range.h"
#include "stub/base/status.h"

namespace kpack {

class FreeMemory {
 public:
  static constexpr uint32_t kCapacity = 192;

  StubStatus add(Range range);     // merges with neighbours
  StubStatus remove(Range range);  // may split a range in two

  bool contains(Range range) const;
  // Lowest aligned address >= floor with [address, address + size) free.
  bool lowest_fit(uint64_t size, uint64_t alignment, uint64_t floor, uint64_t* address) const;
  // Highest aligned address with [address, address + size) free.
  bool highest_fit(uint64_t size, uint64_t alignment, uint64_t* address) const;

  uint32_t count() const { return count_; }
  Range at(uint32_t i) const { return ranges_[i]; }

 private:
  Range ranges_[kCapacity];  // sorted, disjoint, not adjacent
  uint32_t count_ = 0;
};

}  // namespace kpack
