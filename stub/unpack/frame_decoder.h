// Decodes one payload frame (gzip member, LZ4 frame, zstd frame or xz stream) straight into its
// destination, verifying the frame's own check when it has one. The packer cuts the ELF file into
// frames that never straddle two destinations (frame_table.h), so no decoder keeps a copy of the
// kernel.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "stub/base/arena.h"
#include "formats/kpack_image.h"
#include "stub/base/status.h"

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
  // Takes the codec state from `arena`. With `require_frame_check`, every frame must carry the
  // format's own check of its content (it is then what proves the frame); without it (the frame
  // table's XXH3 does), a check that is present is still verified.
  StubStatus init(Codec codec, Arena& arena, bool require_frame_check = true);

  // Decodes the frame at the start of src[0, available). Writes only within dst[0, capacity).
  // With `exact`, the frame must hold exactly `capacity` bytes.
  StubStatus decode(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, bool exact,
                    uint64_t* consumed, uint64_t* produced);

  // XXH3-64 of a frame's compressed bytes src[0, size) against `expected`: the frame table's digest
  // (lz4 and zstd frames). Only the stubs whose codec uses it carry XXH3 (xxh3.h); the others
  // answer false.
  bool xxh3_matches(const uint8_t* src, uint64_t size, uint64_t expected) const;

 private:
  StubStatus decode_gzip(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, uint64_t* consumed,
                         uint64_t* produced);
  StubStatus decode_lz4(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, uint64_t* consumed,
                        uint64_t* produced);
  StubStatus decode_zstd(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, uint64_t* consumed,
                         uint64_t* produced);
  StubStatus decode_xz(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, uint64_t* consumed,
                       uint64_t* produced);

  Codec codec_ = Codec::kRaw;
  bool require_frame_check_ = true;
  uint64_t (*xxh3_)(const void*, size_t) = nullptr;  // chosen in init, on the CPU that decodes
  Arena* arena_ = nullptr;
  ZSTD_DCtx_s* zstd_ = nullptr;
  z_stream_s* zlib_ = nullptr;
};

}  // namespace kpack
