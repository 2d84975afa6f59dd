// LZ4 and zstd frames with their content checksums, as the lz4 and zstd tools (and the kernel's
// build: zstd -22 --ultra) write them; kpack's own frames leave them out (the frame table's XXH3
// proves them). For tests of the stream readers that stock images go through.
#pragma once

#include <doctest/doctest.h>
#include <lz4frame.h>
#include <zstd.h>

#include <cstdint>
#include <span>
#include <vector>

namespace kpack::test {

inline std::vector<uint8_t> checked_lz4(std::span<const uint8_t> data) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  std::vector<uint8_t> out(LZ4F_compressFrameBound(data.size(), &prefs));
  size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
  REQUIRE_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

inline std::vector<uint8_t> checked_zstd(std::span<const uint8_t> data) {
  std::vector<uint8_t> out(ZSTD_compressBound(data.size()));
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(ctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(ctx);
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace kpack::test
