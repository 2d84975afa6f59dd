// Compressing a payload: one frame per piece, the frames compressed in parallel where the codec's
// library would use a single thread, and written in order.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "codecs.h"
#include "layout.h"

namespace kpack {

// One piece of the payload and what it holds (see append_elf_frames).
struct FramePiece {
  std::span<const uint8_t> bytes;
  Content content = Content::kBytes;
};

// Called as frames finish, with the input bytes done so far and in all.
using FrameProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes one piece's frame; append_frame unless a test substitutes its own.
using FrameWriter = std::function<Status(const CompressOptions&, std::span<const uint8_t>, std::vector<uint8_t>&,
                                         const std::string&)>;

// Running out of memory on a worker thread is an error like any other, not a terminate.
Status append_frames(const CompressOptions& options, const std::vector<FramePiece>& pieces,
                     std::vector<uint8_t>& out, const std::string& name, const FrameProgress& progress,
                     const FrameWriter& write_frame = append_frame);

// The frames of a compact ELF (layout_compact), one per region: its code regions are Content::kCode,
// whole writable segments without PF_X kData; xz and gives every frame the same dictionary, at most what the largest region (or the
// relocation table of `table_size` bytes that will follow) can use.
Status append_elf_frames(const CompressOptions& options, const PayloadElf& elf, uint64_t table_size,
                         std::vector<uint8_t>& out, const std::string& name, const FrameProgress& progress);

// The options the relocation table's frame is written with after append_elf_frames' frames.
CompressOptions table_frame_options(const CompressOptions& options, const PayloadElf& elf, uint64_t table_size);

}  // namespace kpack
