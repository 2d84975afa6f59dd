// The stub and setup binaries this kpack was built with (stub_blobs.S embeds them). Kept out of
// kpack_packer, so code that never boots what it builds (the fuzzers) links without them.
#include "image_writer.h"

extern "C" const uint8_t kpack_setup_blob[], kpack_setup_blob_end[];
extern "C" const uint8_t kpack_stub_blob[], kpack_stub_blob_end[];

namespace kpack {

ImageBlobs built_in_blobs() {
  return ImageBlobs{{kpack_setup_blob, kpack_setup_blob_end}, {kpack_stub_blob, kpack_stub_blob_end}};
}

}  // namespace kpack
