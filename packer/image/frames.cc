#include "packer/image/frames.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include <xxhash.h>

#include "formats/call_targets.h"
#include "formats/elf64.h"

namespace kpack {

uint64_t default_chunk_size(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
    case Codec::kLz4: return uint64_t{1} << 20;
    case Codec::kZstd: return uint64_t{6} << 20;
    case Codec::kRaw:
    case Codec::kXz: break;
  }
  return 0;
}

Status append_frames(const Context& ctx, const CompressOptions& options, const std::vector<FramePiece>& pieces,
                     FramedPayload& out, const FrameProgress& progress, const FrameWriter& write_frame) {
  uint64_t total = 0;
  for (const FramePiece& piece : pieces) total += piece.bytes.size();

  // Frames are independent: they are spread over the threads, each compressed on one.
  unsigned threads = std::min<unsigned>(std::max(1u, options.threads), static_cast<unsigned>(pieces.size()));
  std::vector<std::vector<uint8_t>> frames(pieces.size());
  std::vector<std::optional<Error>> errors(pieces.size());
  std::atomic<size_t> next{0};
  std::mutex progress_lock;
  uint64_t done = 0;
  auto worker = [&] {
    for (size_t i; (i = next++) < pieces.size();) {
      try {
        CompressOptions piece_options = options;
        piece_options.threads = 1;
        piece_options.content = pieces[i].content;
        piece_options.fast_decode = pieces[i].fast_decode;
        std::span<const uint8_t> bytes = pieces[i].bytes;
        std::vector<uint8_t> coded;
        if (pieces[i].coding == FrameCoding::kCallTargets) {
          coded.assign(bytes.begin(), bytes.end());
          code_call_targets(coded.data(), coded.size(), pieces[i].file_offset);
          bytes = coded;
        }
        Status status = write_frame(ctx, piece_options, bytes, frames[i]);
        if (!status) errors[i] = status.error();
      } catch (const std::bad_alloc&) {
        errors[i] = ctx.about_output("out of memory while compressing");
      }
      std::lock_guard lock(progress_lock);
      done += pieces[i].bytes.size();
      if (progress) progress(done, total);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  bool xxh3 = digest_for(options.codec) == FrameDigest::kXxh3;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (errors[i]) return *errors[i];
    FrameEntry entry{};
    entry.payload_offset = out.bytes.size();
    entry.payload_size = frames[i].size();
    entry.file_offset = pieces[i].file_offset;
    entry.size = pieces[i].bytes.size();
    entry.digest = xxh3 ? XXH3_64bits(frames[i].data(), frames[i].size()) : 0;
    entry.coding = static_cast<uint64_t>(pieces[i].coding);
    out.frames.push_back(entry);
    out.bytes.insert(out.bytes.end(), frames[i].begin(), frames[i].end());
  }
  return Ok{};
}

namespace {

// Cuts `region` into the fewest pieces of at most `chunk` bytes (0: one piece), all of about the
// same size (whole pages but the last), so that no CPU gets a much larger frame than another.
void cut(const std::vector<uint8_t>& bytes, Range region, uint64_t chunk, Content content, FrameCoding coding,
         std::vector<FramePiece>& pieces) {
  uint64_t count = chunk ? (region.size() + chunk - 1) / chunk : 1;
  uint64_t piece = count > 1 ? std::min(chunk, (region.size() / count + 4095) & ~uint64_t{4095}) : region.size();
  for (uint64_t at = region.begin; at < region.end;) {
    uint64_t size = std::min(piece, region.end - at);
    pieces.push_back({std::span(bytes).subspan(at, size), content, at, false, coding});
    at += size;
  }
}

Content content_of(const PayloadElf& elf, Range region) {
  Content content = Content::kBytes;
  if (std::any_of(elf.code.begin(), elf.code.end(),
                  [&](Range c) { return c.begin == region.begin && c.end == region.end; }))
    content = Content::kCode;
  for (uint32_t i = 0; i < elf.kernel.segment_count; ++i) {
    const LoadSegment& s = elf.kernel.segments[i];
    if (s.offset == region.begin && s.filesz == region.size() && (s.flags & elf::kPfW) && !(s.flags & elf::kPfX))
      content = Content::kData;
  }
  return content;
}

}  // namespace

bool codes_call_targets(Codec codec) { return codec == Codec::kZstd || codec == Codec::kGzip; }

Status append_elf_frames(const Context& ctx, const CompressOptions& options, const PayloadElf& elf,
                         std::span<const uint8_t> relocation_table, FramedPayload& out, const FrameProgress& progress) {
  uint64_t chunk = options.chunk_size ? options.chunk_size : default_chunk_size(options.codec);
  std::vector<FramePiece> pieces;
  for (Range region : elf.regions) {
    Content content = content_of(elf, region);
    bool coded = content == Content::kCode && codes_call_targets(options.codec);
    cut(elf.bytes, region, chunk, content, coded ? FrameCoding::kCallTargets : FrameCoding::kNone, pieces);
  }
  // The relocation table is decoded on every KASLR boot. Coded (code_relocation_planes), it is
  // smaller and cheaper to decode at zstd's own level than at its cheap one, so only gzip, whose
  // inflate of it would cost a noticeable part of the stub's work, keeps it stored
  // (doc/benchmark-history.md, "Figures the code rests on" and issue 45).
  if (!relocation_table.empty())
    pieces.push_back({relocation_table, Content::kTable, elf.bytes.size(), options.codec == Codec::kGzip});
  CompressOptions all = options;
  if (options.codec == Codec::kXz) {
    uint64_t largest = 0;
    for (const FramePiece& piece : pieces) largest = std::max<uint64_t>(largest, piece.bytes.size());
    all.xz_dictionary = xz_dictionary_for(options.level ? options.level : default_level(Codec::kXz), largest);
  }
  return append_frames(ctx, all, pieces, out, progress);
}

}  // namespace kpack
