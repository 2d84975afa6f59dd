// Debian's xxhash.h inlined into this file with AVX2 vectors; this one file is compiled with
// -mavx2 (CMakeLists.txt), and only xxh3_64 decides when it may run.
#include "stub/engine/xxh3.h"

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

namespace kpack {

uint64_t xxh3_64_avx2(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace kpack
