// Debian's xxhash.h inlined into this file with AVX-512 vectors; this one file is compiled with
// -mavx512f (CMakeLists.txt), and only xxh3_for_this_cpu decides when it may run. As in the AVX2
// build, only the vector loop past XXH3's 240-byte short paths is built here, and the SSE2 build
// serves the short ones.
#include "stub/engine/xxh3.h"

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX512
// GCC 12's _mm512_undefined_* initialise a variable from itself on purpose (an undefined value):
// its own headers warn about that once xxhash.h inlines them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xxhash.h>
#pragma GCC diagnostic pop

namespace kpack {

uint64_t xxh3_64_avx512(const void* data, size_t size) {
  if (size <= XXH3_MIDSIZE_MAX) return xxh3_64_sse2(data, size);
  return XXH3_hashLong_64b_default(data, size, 0, XXH3_kSecret, sizeof(XXH3_kSecret));
}

}  // namespace kpack
