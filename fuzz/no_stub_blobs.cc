// The seed generator packs images with the packer's own code but never boots them, so zero-filled
// blobs of the right shape stand in for the stub: two sectors of setup, and a 16-byte "stub" after
// which the StubInfo record goes.
#include "image_writer.h"

namespace kpack {

ImageBlobs built_in_blobs(Codec) {
  static const uint8_t setup[1024] = {};
  alignas(16) static const uint8_t stub[16] = {};
  return ImageBlobs{setup, stub};
}

}  // namespace kpack
