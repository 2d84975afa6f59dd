// The codec kpack packs with when the command line names none: the one that fits the input, so
// that the default never costs the user bytes or boot time the stock image did not.
#pragma once

#include <string>

#include "formats/kpack_image.h"
#include "packer/input/kernel_input.h"

namespace kpack {

struct DefaultCodec {
  Codec codec;
  int level;           // the codec's default level
  std::string reason;  // one line for the user: why this codec
};

// By the codec of the image the kernel came from (KernelInput::source_format):
//   zstd                 -> zstd: kpack's zstd image is smaller than a stock zstd image
//   xz, lzma             -> xz:   kpack's xz image is no larger than stock's
//   lz4                  -> lz4:  kpack's lz4 image is smaller than stock's, as fast
//   gzip, bzip2, lzo     -> zstd: smaller than stock's, and decoded in fewer instructions
//   a vmlinux, raw       -> lz4:  nothing to match, so the fastest compressed boot
// and each boots in no more guest instructions than the stock image (lz4: within 0.3 %)
// (doc/codecs.md, BENCHMARKS.md).
DefaultCodec default_codec_for(const KernelInput& input);

}  // namespace kpack
