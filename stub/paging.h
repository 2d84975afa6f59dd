// The stub's page tables (paging.cc): an identity map of 0..4 GiB plus 1 GiB windows above it.
#pragma once

#include <stdint.h>

namespace kpack {

// True when [addr, addr + size) is inside the identity map the 64-bit entry switched to.
bool identity_mapped(uint64_t addr, uint64_t size);

// Adds the 1 GiB windows [addr, addr + size) touches to that map; false when the pool is spent.
bool map_identity(uint64_t addr, uint64_t size);

}  // namespace kpack
