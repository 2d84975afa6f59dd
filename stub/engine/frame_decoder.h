// Decodes one payload frame (gzip member, LZ4 frame, zstd frame or xz stream) straight into its destination,
// verifying the frame's checksum. The packer writes one frame per region of the ELF file, so a
// frame never straddles two destinations and no decoder keeps a copy of the kernel.
#pragma once

#include <stdint.h>

#include "arena.h"
#include "formats/kpack_image.h"
#include "status.h"

struct ZSTD_DCtx_s;
struct z_stream_s;

namespace kpack {

// What a linked LZ4 block may refer back to: the last 64 KiB (or fewer) written before it.
struct Lz4History {
  const uint8_t* begin;
  uint64_t size;
};
Lz4History lz4_history(const uint8_t* region, uint64_t written);

// The codec state a payload needs beyond kArenaSize, known before anything is written: for xz the
// dictionary and filter state, read from the first frame's stream and block headers (the packer
// gives every frame the same dictionary). 0 for the other codecs.
StubStatus codec_state_size(Codec codec, const uint8_t* payload, uint64_t size, uint64_t* bytes);

class FrameDecoder {
 public:
  // Takes the codec state from `arena`.
  StubStatus init(Codec codec, Arena& arena);

  // Decodes the frame at the start of src[0, available). Writes only within dst[0, capacity).
  // With `exact`, the frame must hold exactly `capacity` bytes.
  StubStatus decode(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, bool exact,
                    uint64_t* consumed, uint64_t* produced);

 private:
  StubStatus decode_gzip(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                         uint64_t* consumed, uint64_t* produced);
  StubStatus decode_lz4(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                        uint64_t* consumed, uint64_t* produced);
  StubStatus decode_zstd(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                         uint64_t* consumed, uint64_t* produced);
  StubStatus decode_xz(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                       uint64_t* consumed, uint64_t* produced);

  Codec codec_ = Codec::kRaw;
  Arena* arena_ = nullptr;
  ZSTD_DCtx_s* zstd_ = nullptr;
  z_stream_s* zlib_ = nullptr;
};

}  // namespace kpack
