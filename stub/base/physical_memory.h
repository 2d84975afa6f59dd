// The engine reaches physical memory only through this interface. In the stub it is the identity
// mapping; in host tests and fuzzers it is a buffer that checks every range against what the
// engine was allowed to touch.
#pragma once

#include <stdint.h>

namespace kpack {

class PhysicalMemory {
 public:
  // A pointer to [addr, addr + size) or nullptr when that range may not be read / written.
  virtual const uint8_t* readable(uint64_t addr, uint64_t size) = 0;
  virtual uint8_t* writable(uint64_t addr, uint64_t size) = 0;
  // An address below which any `size` bytes can still be reached, wherever they lie: the stub's
  // page-table pool maps only so many 1 GiB windows above 4 GiB, so placement (KASLR's slots)
  // keeps below it rather than draw a slot it cannot write.
  virtual uint64_t reachable_below(uint64_t size) const {
    (void)size;
    return ~0ull;
  }

 protected:
  ~PhysicalMemory() = default;
};

}  // namespace kpack
