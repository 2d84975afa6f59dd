// The setup binary and the per-codec stubs this kpack was built with (stub_blobs.S embeds them).
// Kept out of kpack_packer, so code that never boots what it builds (the fuzzers) links without them.
#include "packer/image/image_writer.h"

extern "C" const uint8_t kpack_setup_blob[], kpack_setup_blob_end[];
#define KPACK_STUB_BLOB(codec) extern "C" const uint8_t kpack_stub_##codec[], kpack_stub_##codec##_end[];
KPACK_STUB_BLOB(raw)
KPACK_STUB_BLOB(gzip)
KPACK_STUB_BLOB(lz4)
KPACK_STUB_BLOB(zstd)
KPACK_STUB_BLOB(xz)

namespace kpack {

ImageBlobs built_in_blobs(Codec codec) {
  std::span<const uint8_t> setup{kpack_setup_blob, kpack_setup_blob_end};
  switch (codec) {
    case Codec::kRaw: return {setup, {kpack_stub_raw, kpack_stub_raw_end}};
    case Codec::kGzip: return {setup, {kpack_stub_gzip, kpack_stub_gzip_end}};
    case Codec::kLz4: return {setup, {kpack_stub_lz4, kpack_stub_lz4_end}};
    case Codec::kZstd: return {setup, {kpack_stub_zstd, kpack_stub_zstd_end}};
    case Codec::kXz: return {setup, {kpack_stub_xz, kpack_stub_xz_end}};
  }
  return {setup, {}};
}

}  // namespace kpack
