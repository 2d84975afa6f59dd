// Host codecs. Packing writes one standard frame per region (gzip member, LZ4 frame, zstd frame,
// xz stream), each recording its content size and checksum, so the stub can decode every region
// straight to its destination and verify it. Reading decodes whole payload streams, including the formats
// stock kernels ship.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/kpack_image.h"
#include "result.h"

namespace kpack {

// Compressed-stream formats found in bzImage payloads.
enum class StreamFormat { kRaw, kGzip, kXz, kLz4Legacy, kLz4Frame, kZstd, kBzip2, kLzma, kLzo };

const char* stream_format_name(StreamFormat format);

// Recognises a payload by its magic bytes; raw means "starts with an ELF header".
std::optional<StreamFormat> detect_stream_format(std::span<const uint8_t> payload);

// The level used when the user gives none.
int default_level(Codec codec);
// Valid levels are min_level(codec)..max_level(codec); raw has only 0.
int min_level(Codec codec);
int max_level(Codec codec);

// xz: the dictionary to give every frame of a payload whose largest region is `largest` bytes: the
// preset's for `level`, or less when the regions are smaller (no larger decoder state than useful).
uint64_t xz_dictionary_for(int level, uint64_t largest);

struct CompressOptions {
  Codec codec = Codec::kZstd;
  int level = 0;  // 0 means default_level(codec)
  unsigned threads = 1;  // zstd uses this many workers
  // Cheap to decode rather than small, whatever `level` says: gzip stores the bytes, zstd uses its
  // level 3 (lz4 decodes cheaply at any level; xz has no cheap mode, see word_size). For data the stub reads on every boot but that
  // barely compresses, such as the kernel's relocation table (see image_writer.cc).
  bool fast_decode = false;
  // xz: the region is code (a PT_LOAD with PF_X but not PF_W), so it goes through the x86 BCJ
  // filter first.
  bool executable = false;
  // xz: the region is an array of words this wide (the relocation table: 4), so it goes through
  // the delta filter first. 0: not.
  uint32_t word_size = 0;
  // xz: the dictionary of every frame of the payload, capped by the level's preset. One size for
  // all frames, because the stub sizes its work area from the first frame's headers (0: preset's).
  uint64_t xz_dictionary = 0;
};

// Appends one frame holding `region`, with content size and checksum. `name` is the output file,
// used in error messages. Raw appends the bytes as they are.
Status append_frame(const CompressOptions& options, std::span<const uint8_t> region,
                    std::vector<uint8_t>& out, const std::string& name);

// Decodes a payload made of one or more concatenated frames of `format` and returns their
// concatenated content. Bytes after the last frame that do not start another frame (stock images
// append the uncompressed size as a u32) are ignored. `name` is the input file, for messages.
// Decoding fails once the content would exceed `max_output` bytes, so a hostile image cannot
// exhaust memory; tests lower it to exercise the limit cheaply.
inline constexpr uint64_t kMaxDecodedBytes = uint64_t{1} << 30;
Result<std::vector<uint8_t>> decode_stream(StreamFormat format, std::span<const uint8_t> payload,
                                           const std::string& name,
                                           uint64_t max_output = kMaxDecodedBytes);

}  // namespace kpack
