// Debian's xxhash.h inlined into the including file, for the vector build XXH_VECTOR names, in a
// freestanding build: nothing of it may reach for the C library's heap. Since GCC 14, libstdc++'s
// freestanding <stdlib.h> declares no malloc, which xxhash.h's state allocators (0.8.3, trixie) and
// GCC's <mm_malloc.h> (through <immintrin.h>) both call: XXH_NO_STDLIB drops the first, and
// <mm_malloc.h>'s own guard keeps out the second, whose _mm_malloc the digest never uses. Both are
// unused static functions under bookworm's GCC 12 and xxhash 0.8.1, so the stub is the same there.
#pragma once

#ifndef XXH_VECTOR
#error "define XXH_VECTOR before including xxhash_inline.h"
#endif

#define XXH_INLINE_ALL
#define XXH_NO_STDLIB
#define _MM_MALLOC_H_INCLUDED
#include <xxhash.h>
