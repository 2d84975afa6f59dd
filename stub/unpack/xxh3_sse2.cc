// Debian's xxhash.h inlined into this file with SSE2 vectors, at -O3 (CMakeLists.txt): the
// library's own -O2 build keeps the accumulators in memory and runs half again as many instructions.
#include "stub/unpack/codec_config.h"
#include "stub/unpack/xxh3.h"

#define XXH_VECTOR XXH_SSE2
#include "stub/unpack/xxhash_inline.h"

namespace kpack {

uint64_t xxh3_64_sse2(const void* data, size_t size) { return XXH3_64bits(data, size); }

#if !KPACK_LZ4_EXPORTS_XXH32
uint32_t lz4_xxh32(const void* input, size_t length, uint32_t seed) { return XXH32(input, length, seed); }
#endif

}  // namespace kpack
