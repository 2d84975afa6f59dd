// Debian's xxhash.h inlined into this file with SSE2 vectors, at -O3 (CMakeLists.txt): the
// library's own -O2 build keeps the accumulators in memory and runs half again as many instructions.
#include "stub/unpack/xxh3.h"

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_SSE2
#include <xxhash.h>

namespace kpack {

uint64_t xxh3_64_sse2(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace kpack
