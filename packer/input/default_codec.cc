#include "packer/input/default_codec.h"

#include <utility>

#include "packer/codecs/codecs.h"

namespace kpack {

namespace {

DefaultCodec with(Codec codec, std::string reason) { return {codec, default_level(codec), std::move(reason)}; }

}  // namespace

DefaultCodec default_codec_for(const KernelInput& input) {
  if (!input.source_format)
    return with(Codec::kLz4, "the input is a vmlinux, with no stock image to match: lz4 boots fastest");
  const std::string payload = std::string("the input's payload is ") + stream_format_name(*input.source_format);
  switch (*input.source_format) {
    case StreamFormat::kZstd:
      return with(Codec::kZstd,
                  payload + ", and kpack's zstd image is smaller than a stock zstd image and boots faster");
    case StreamFormat::kXz:
    case StreamFormat::kLzma:
      return with(Codec::kXz, payload + ", and kpack's xz image is no larger than a stock xz image and boots faster");
    case StreamFormat::kLz4Legacy:
    case StreamFormat::kLz4Frame:
      return with(Codec::kLz4, payload + ", and kpack's lz4 image is smaller than a stock lz4 image and boots as fast");
    case StreamFormat::kGzip:
    case StreamFormat::kBzip2:
    case StreamFormat::kLzo:
      return with(Codec::kZstd, payload + ", and kpack's zstd image is smaller than that and boots faster");
    case StreamFormat::kRaw: break;
  }
  return with(Codec::kLz4, payload + ", with no stock size to match: lz4 boots fastest");
}

}  // namespace kpack
