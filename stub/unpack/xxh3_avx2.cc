// Debian's xxhash.h inlined into this file with AVX2 vectors; this one file is compiled with
// -mavx2 (CMakeLists.txt), and only xxh3_for_this_cpu decides when it may run. Only inputs past
// XXH3's 240-byte short paths take the vector loop, so only that loop is built here: the short
// paths are scalar in every build and the SSE2 build's serve, which saves the stub 2.3 KB. A frame
// is hundreds of KB, so the short paths never matter for speed.
#include "stub/unpack/xxh3.h"

#define XXH_VECTOR XXH_AVX2
#include "stub/unpack/xxhash_inline.h"

namespace kpack {

uint64_t xxh3_64_avx2(const void* data, size_t size) {
  if (size <= XXH3_MIDSIZE_MAX) return xxh3_64_sse2(data, size);
  return XXH3_hashLong_64b_default(data, size, 0, XXH3_kSecret, sizeof(XXH3_kSecret));
}

}  // namespace kpack
