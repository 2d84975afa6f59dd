#include "frames.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "formats/elf64.h"


namespace kpack {

Status append_frames(const CompressOptions& options, const std::vector<FramePiece>& pieces,
                     std::vector<uint8_t>& out, const std::string& name, const FrameProgress& progress,
                     const FrameWriter& write_frame) {
  uint64_t total = 0;
  for (const FramePiece& piece : pieces) total += piece.bytes.size();

  // zstd spreads each frame over its own workers; the other libraries compress on one thread, so
  // their frames (independent by design) are spread over the threads instead.
  unsigned threads = options.codec == Codec::kZstd ? 1 : std::max(1u, options.threads);
  threads = std::min<unsigned>(threads, static_cast<unsigned>(pieces.size()));
  std::vector<std::vector<uint8_t>> frames(pieces.size());
  std::vector<std::optional<Error>> errors(pieces.size());
  std::atomic<size_t> next{0};
  std::mutex progress_lock;
  uint64_t done = 0;
  auto worker = [&] {
    for (size_t i; (i = next++) < pieces.size();) {
      try {
        CompressOptions piece_options = options;
        piece_options.content = pieces[i].content;
        Status status = write_frame(piece_options, pieces[i].bytes, frames[i], name);
        if (!status) errors[i] = status.error();
      } catch (const std::bad_alloc&) {
        errors[i] = error_in(name, "out of memory while compressing");
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

  for (size_t i = 0; i < pieces.size(); ++i) {
    if (errors[i]) return *errors[i];
    out.insert(out.end(), frames[i].begin(), frames[i].end());
  }
  return Ok{};
}

namespace {

CompressOptions with_dictionary(CompressOptions options, const PayloadElf& elf, uint64_t table_size) {
  if (options.codec != Codec::kXz) return options;
  uint64_t largest = table_size;
  for (Range region : elf.regions) largest = std::max(largest, region.size());
  options.xz_dictionary = xz_dictionary_for(options.level ? options.level : default_level(Codec::kXz), largest);
  return options;
}

}  // namespace

Status append_elf_frames(const CompressOptions& options, const PayloadElf& elf, uint64_t table_size,
                         std::vector<uint8_t>& out, const std::string& name, const FrameProgress& progress) {
  std::vector<FramePiece> pieces;
  for (Range region : elf.regions) {
    Content content = Content::kBytes;
    if (std::any_of(elf.code.begin(), elf.code.end(), [&](Range c) { return c.begin == region.begin && c.end == region.end; }))
      content = Content::kCode;
    for (uint32_t i = 0; i < elf.kernel.segment_count; ++i) {
      const LoadSegment& s = elf.kernel.segments[i];
      if (s.offset == region.begin && s.filesz == region.size() && (s.flags & elf::kPfW) && !(s.flags & elf::kPfX))
        content = Content::kData;
    }
    pieces.push_back({std::span(elf.bytes).subspan(region.begin, region.size()), content});
  }
  return append_frames(with_dictionary(options, elf, table_size), pieces, out, name, progress);
}

CompressOptions table_frame_options(const CompressOptions& options, const PayloadElf& elf, uint64_t table_size) {
  CompressOptions table = with_dictionary(options, elf, table_size);
  table.fast_decode = true;
  table.content = Content::kTable;
  return table;
}

}  // namespace kpack
