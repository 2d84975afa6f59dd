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

// liblz4 exports the XXH32 it uses for frame checksums under this name (see nm liblz4.a); the
// frame format requires exactly that hash, so the engine uses the library's own.
extern "C" unsigned int LZ4_XXH32(const void* input, size_t length, unsigned int seed);
