// The one place that configures the codec libraries' headers for the engine, in the stub and on
// the host alike: the static-linking-only APIs it needs (zstd's static DCtx and frame header),
// zlib without its gz* file layer, and liblzma.
#pragma once

#include <lzma.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <lz4.h>

#define Z_SOLO
#include <zlib.h>

#include <stdint.h>

// The LZ4 frame format checks its descriptor, blocks and content with XXH32. bookworm's liblz4.a
// (1.9.4) carries its own copy as LZ4_XXH32 (see nm liblz4.a), and the engine uses the library's;
// trixie's (1.10) links Debian's libxxhash instead, so the engine takes XXH32 from the xxhash.h it
// inlines for XXH3 (xxh3_sse2.cc). CMakeLists.txt looks at the archive: KPACK_LZ4_EXPORTS_XXH32.
#if KPACK_LZ4_EXPORTS_XXH32
extern "C" unsigned int LZ4_XXH32(const void* input, size_t length, unsigned int seed);
#endif

namespace kpack {

#if KPACK_LZ4_EXPORTS_XXH32
inline uint32_t lz4_xxh32(const void* input, size_t length, uint32_t seed) { return LZ4_XXH32(input, length, seed); }
#else
uint32_t lz4_xxh32(const void* input, size_t length, uint32_t seed);
#endif

}  // namespace kpack
