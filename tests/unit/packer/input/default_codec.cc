// The codec a pack with no codec option uses: the one that fits the image the kernel came from.
#include <doctest/doctest.h>

#include <string>

#include "packer/input/default_codec.h"

using namespace kpack;

namespace {

DefaultCodec from(std::optional<StreamFormat> format) {
  KernelInput input;
  input.source_format = format;
  return default_codec_for(input);
}

}  // namespace

TEST_CASE("the default codec follows the stock image's, never larger by more than 1 % nor slower") {
  struct Expected {
    StreamFormat stock;
    Codec codec;
    int level;
    const char* reason;
  };
  const Expected rows[] = {
      {StreamFormat::kZstd, Codec::kZstd, 19,  // Debian 13's kernels
       "the input's payload is zstd, and kpack's zstd image is smaller than a stock zstd image and boots faster"},
      {StreamFormat::kLz4Legacy, Codec::kLz4, 12,  // Debian 12's cloud kernel
       "the input's payload is lz4-legacy, and kpack's lz4 image is smaller than a stock lz4 image and boots as fast"},
      {StreamFormat::kXz, Codec::kXz, 9,  // Debian 12's generic kernel
       "the input's payload is xz, and kpack's xz image is no larger than a stock xz image and boots faster"},
  };
  for (const Expected& row : rows) {
    DefaultCodec chosen = from(row.stock);
    CHECK(chosen.codec == row.codec);
    CHECK(chosen.level == row.level);
    CHECK(chosen.reason == row.reason);
  }
  CHECK(from(StreamFormat::kLz4Frame).codec == Codec::kLz4);
  CHECK(from(StreamFormat::kLzma).codec == Codec::kXz);
  // gzip, bzip2 and lzo images are larger than kpack's zstd (7.3.4's ELF: gzip -9 16.2 MB, bzip2
  // -9 17.3 MB, kpack zstd 13.2 MB) and slower to decode.
  for (StreamFormat format : {StreamFormat::kGzip, StreamFormat::kBzip2, StreamFormat::kLzo}) {
    DefaultCodec chosen = from(format);
    CAPTURE(chosen.reason);
    CHECK(chosen.codec == Codec::kZstd);
    CHECK(chosen.reason == std::string("the input's payload is ") + stream_format_name(format) +
                               ", and kpack's zstd image is smaller than that and boots faster");
  }
}

TEST_CASE("with no stock image to match, the default is the fastest compressed boot") {
  DefaultCodec vmlinux = from(std::nullopt);
  CHECK(vmlinux.codec == Codec::kLz4);
  CHECK(vmlinux.reason == "the input is a vmlinux, with no stock image to match: lz4 boots fastest");
  DefaultCodec raw = from(StreamFormat::kRaw);  // a raw kpack image
  CHECK(raw.codec == Codec::kLz4);
  CHECK(raw.reason == "the input's payload is raw, with no stock size to match: lz4 boots fastest");
}
