// SSE2, which every x86-64 CPU has, for the scans the stub and the host share
// (formats/call_targets.h, formats/relocation_table.h). In the freestanding stub, GCC's
// <mm_malloc.h>, which <emmintrin.h> pulls in, would call a malloc that libstdc++'s freestanding
// <stdlib.h> no longer declares since GCC 14; its own include guard keeps it out, as nothing here
// uses _mm_malloc (stub/unpack/xxhash_inline.h does the same for XXH3's vectors).
#pragma once

#if !__STDC_HOSTED__ && !defined(_MM_MALLOC_H_INCLUDED)
#define _MM_MALLOC_H_INCLUDED
#endif
#include <emmintrin.h>
