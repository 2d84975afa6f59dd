// Host codecs. Packing writes standard frames (gzip member, LZ4 frame, zstd frame, xz stream), each
// recording its content size, so the stub can decode every piece of a region straight to its
// destination; each is proved by its own CRC32 (gzip, xz) or by the frame table's XXH3-64 (lz4,
// zstd: formats/kpack_image.h). Reading decodes whole payload streams, including the formats stock
// kernels ship.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/kpack_image.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

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

// What a region of the payload holds, for xz's filters, each chosen by measuring Debian's kernels
// (doc/benchmark-history.md): kBytes lc=4; kCode x86 BCJ, lc=4 (BCJ turns call and jump targets
// absolute, so repeated calls match); kData (writable, not executable: pointers, counters) lc=0
// lp=2 pb=2, smaller than lc=4 there; kTable (the relocation table, coded by
// code_relocation_planes: differences of sorted words, their bytes grouped) lc=0 lp=0 pb=0, 122 KB
// for 7.3.4's where the words behind the delta filter (lp=2 pb=2) took 144 KB.
enum class Content : uint8_t { kBytes, kCode, kData, kTable };

struct CompressOptions {
  Codec codec = Codec::kZstd;
  int level = 0;         // 0 means default_level(codec)
  unsigned threads = 1;  // zstd uses this many workers
  // Cheap to decode rather than small, whatever `level` says: gzip stores the bytes, zstd uses its
  // level 3 (lz4 decodes cheaply at any level; xz has no cheap mode, see Content::kTable). For data the stub reads on every boot but that
  // barely compresses, such as the kernel's relocation table (see image_writer.cc).
  bool fast_decode = false;
  // xz: what the region holds, which picks the filters and LZMA2's literal and position bits.
  Content content = Content::kBytes;
  // xz: the dictionary of every frame of the payload, capped by the level's preset. One size for
  // all frames, because the stub sizes its work area from the first frame's headers (0: preset's).
  uint64_t xz_dictionary = 0;
  // The largest piece a region is cut into (frames.h); 0: default_chunk_size(codec).
  uint64_t chunk_size = 0;
};

// Appends one frame holding `region`, with its content size, and the format's own check of the
// content unless the codec's digest is the frame table's XXH3 (digest_for). Its errors name the
// context's output. Raw appends the bytes as they are.
Status append_frame(const Context& ctx, const CompressOptions& options, std::span<const uint8_t> region,
                    std::vector<uint8_t>& out);

// Decodes a payload made of one or more concatenated frames of `format` and returns their
// concatenated content. Bytes after the last frame that do not start another frame (stock images
// append the uncompressed size as a u32) are ignored. Errors name `payload`'s file.
// Decoding fails once the content would exceed `max_output` bytes, so a hostile image cannot
// exhaust memory; tests lower it to exercise the limit cheaply.
inline constexpr uint64_t kMaxDecodedBytes = uint64_t{1} << 30;
Result<std::vector<uint8_t>> decode_stream(StreamFormat format, const FileView& payload,
                                           uint64_t max_output = kMaxDecodedBytes);

}  // namespace kpack
