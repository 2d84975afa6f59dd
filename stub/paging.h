// The stub's page tables (paging.cc): an identity map of 0..4 GiB plus 1 GiB windows above it.
#pragma once

#include <stdint.h>

namespace kpack {

// True when [addr, addr + size) is inside the identity map the 64-bit entry switched to.
bool identity_mapped(uint64_t addr, uint64_t size);

}  // namespace kpack
