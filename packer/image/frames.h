// Compressing a payload: one frame per piece, the frames compressed in parallel, written in order,
// and described by a frame table (FrameEntry, formats/kpack_image.h) the stub decodes them with.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "packer/codecs/codecs.h"
#include "packer/image/layout.h"

namespace kpack {

// One piece of the payload and what it holds (see append_elf_frames).
struct FramePiece {
  std::span<const uint8_t> bytes;
  Content content = Content::kBytes;
  uint64_t file_offset = 0;                 // where the bytes lie in the payload's ELF file (the table: at its end)
  bool fast_decode = false;                 // CompressOptions::fast_decode for this piece
  FrameCoding coding = FrameCoding::kNone;  // done to a copy of the bytes before they are compressed
};

// The frames, concatenated, and the table that says where each one starts and belongs.
struct FramedPayload {
  std::vector<uint8_t> bytes;
  std::vector<FrameEntry> frames;
};

// How large the independent pieces of a region may be, when the caller gives no size (the sizes and
// what each cost: doc/benchmark-history.md, table (d)): 1 MiB for gzip and lz4, enough frames to
// spread over CPUs; 6 MiB for zstd, whose level-19 window is 8 MiB; xz keeps whole regions, since its
// users chose it for size.
uint64_t default_chunk_size(Codec codec);

// Called as frames finish, with the input bytes done so far and in all.
using FrameProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes one piece's frame; append_frame unless a test substitutes its own.
using FrameWriter =
    std::function<Status(const Context&, const CompressOptions&, std::span<const uint8_t>, std::vector<uint8_t>&)>;

// Appends one frame per piece to `out`, with its table entry (XXH3-64 of the compressed frame when
// the codec's digest is kXxh3). Running out of memory on a worker thread is an error like any other, not a
// terminate.
Status append_frames(const Context& ctx, const CompressOptions& options, const std::vector<FramePiece>& pieces,
                     FramedPayload& out, const FrameProgress& progress, const FrameWriter& write_frame = append_frame);

// Whether a codec's frames of machine code get their call targets coded (FrameCoding::kCallTargets):
// zstd and gzip, whose code it shrinks much for a small part of their decode. Not lz4, chosen for
// speed, whose decode it makes much dearer; not xz, whose streams have LZMA2's x86 BCJ filter; not
// raw, whose bytes stay as they are (the figures: doc/benchmark-history.md, "Figures the code
// rests on").
bool codes_call_targets(Codec codec);

// The frames of a compact ELF (layout_compact): each region cut into pieces of at most the chunk
// size (CompressOptions::chunk_size, else default_chunk_size), code regions Content::kCode (their
// call targets coded where codes_call_targets says), whole writable segments without PF_X kData;
// then `relocation_table`, in a frame of its own. xz gives every frame the same dictionary, at
// most what the largest piece can use.
Status append_elf_frames(const Context& ctx, const CompressOptions& options, const PayloadElf& elf,
                         std::span<const uint8_t> relocation_table, FramedPayload& out, const FrameProgress& progress);

}  // namespace kpack
