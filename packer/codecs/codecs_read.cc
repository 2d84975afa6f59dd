// Reading side of the codecs: recognise and decode whole payload streams, both the frames kpack
// writes and the formats stock kernels ship. Stock payloads end with a u32 of the uncompressed
// size that belongs to no frame, so after each frame we continue only if the next bytes start
// another frame of the same format.
#include <lz4.h>
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "packer/codecs/codecs.h"
#include "formats/elf64.h"
#include "formats/frame_format.h"

namespace kpack {

const char* stream_format_name(StreamFormat format) {
  switch (format) {
    case StreamFormat::kRaw: return "raw";
    case StreamFormat::kGzip: return "gzip";
    case StreamFormat::kXz: return "xz";
    case StreamFormat::kLz4Legacy: return "lz4-legacy";
    case StreamFormat::kLz4Frame: return "lz4";
    case StreamFormat::kZstd: return "zstd";
    case StreamFormat::kBzip2: return "bzip2";
    case StreamFormat::kLzma: return "lzma";
    case StreamFormat::kLzo: return "lzo";
  }
  return "unknown";
}

namespace {

using namespace frame;

// Legacy LZ4 (lz4 -l, as the kernel uses it) cuts the input into blocks of exactly this size.
constexpr size_t kLz4LegacyBlockSize = 8 << 20;

template <size_t N>
bool starts_with(std::span<const uint8_t> data, const uint8_t (&magic)[N]) {
  return data.size() >= N && std::memcmp(data.data(), magic, N) == 0;
}

std::string describe_size(uint64_t bytes) {
  constexpr uint64_t kMiB = 1 << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) {
    if (bytes % (1024 * kMiB) == 0) return std::to_string(bytes / (1024 * kMiB)) + " GiB";
    return std::to_string(bytes / kMiB) + " MiB";
  }
  return std::to_string(bytes) + " bytes";
}

// The growing output of a decoder. It hands out room one byte past the limit, so "the decoder
// filled more than the limit" is exactly "the content exceeds the limit".
class Sink {
 public:
  explicit Sink(uint64_t max_output) : max_output_(max_output) {}

  // Free room to decode into; empty once the content is already over the limit. The room is not
  // zero-filled: decoders write it before anything reads it, and clearing every doubling cost the
  // fuzzers a third of their time.
  std::span<uint8_t> room() {
    const uint64_t hard_end = max_output_ + 1;
    if (filled_ >= hard_end) return {};
    if (filled_ == capacity_) {
      const uint64_t grown = std::min(std::max<uint64_t>(capacity_ * 2, 64 << 10), hard_end);
      std::unique_ptr<uint8_t[]> bigger(new uint8_t[grown]);
      if (filled_) std::memcpy(bigger.get(), buffer_.get(), filled_);
      buffer_ = std::move(bigger);
      capacity_ = grown;
    }
    return {buffer_.get() + filled_, capacity_ - filled_};
  }
  void commit(size_t bytes) { filled_ += bytes; }
  bool over_limit() const { return filled_ > max_output_; }

  std::vector<uint8_t> take() { return std::vector<uint8_t>(buffer_.get(), buffer_.get() + filled_); }

 private:
  uint64_t max_output_;
  std::unique_ptr<uint8_t[]> buffer_;
  uint64_t capacity_ = 0;
  uint64_t filled_ = 0;
};

// Shared wording, so every format reports problems the same way.
struct Problems {
  const FileView& file;
  const char* format;
  uint64_t max_output;

  Error corrupt(const std::string& detail) const {
    return file.error(std::string("corrupt ") + format + " payload: " + detail);
  }
  Error truncated() const { return file.error(std::string("truncated ") + format + " payload"); }
  Error too_big() const {
    return file.error(std::string(format) + " payload decodes to more than " + describe_size(max_output) +
                      ", refusing it");
  }
};

Result<std::vector<uint8_t>> decode_gzip(std::span<const uint8_t> in, const Problems& problems, Sink& sink) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return problems.file.error("gzip: cannot initialise zlib");
  std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, &inflateEnd);

  size_t pos = 0;
  do {
    inflateReset(&stream);
    for (;;) {
      const std::span<uint8_t> room = sink.room();
      if (room.empty()) return problems.too_big();
      const size_t in_avail = std::min<size_t>(in.size() - pos, std::numeric_limits<uInt>::max());
      const size_t out_avail = std::min<size_t>(room.size(), std::numeric_limits<uInt>::max());
      stream.next_in = const_cast<Bytef*>(in.data() + pos);
      stream.avail_in = static_cast<uInt>(in_avail);
      stream.next_out = room.data();
      stream.avail_out = static_cast<uInt>(out_avail);
      const int ret = inflate(&stream, Z_NO_FLUSH);
      pos += in_avail - stream.avail_in;
      sink.commit(out_avail - stream.avail_out);
      if (sink.over_limit()) return problems.too_big();
      if (ret == Z_STREAM_END) break;
      if (ret == Z_DATA_ERROR) return problems.corrupt(stream.msg ? stream.msg : "invalid deflate data");
      if (ret != Z_OK && ret != Z_BUF_ERROR) return problems.corrupt("zlib error " + std::to_string(ret));
      // Room left over with all input consumed means the member needs bytes that are not there.
      if (pos == in.size() && stream.avail_out != 0) return problems.truncated();
    }
  } while (starts_with(in.subspan(pos), kGzipMagic));
  return sink.take();
}

std::string lzma_problem(lzma_ret ret) {
  switch (ret) {
    case LZMA_FORMAT_ERROR: return "not an xz stream";
    case LZMA_OPTIONS_ERROR: return "unsupported compression options";
    case LZMA_DATA_ERROR: return "compressed data is corrupt";
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
    default: return "liblzma error " + std::to_string(static_cast<int>(ret));
  }
}

Result<std::vector<uint8_t>> decode_xz(std::span<const uint8_t> in, const Problems& problems, Sink& sink) {
  size_t pos = 0;
  do {
    // A single-stream decoder stops right after the stream footer, leaving whatever follows to us.
    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK)
      return problems.file.error("xz: cannot initialise liblzma");
    std::unique_ptr<lzma_stream, decltype(&lzma_end)> guard(&stream, &lzma_end);
    for (;;) {
      const std::span<uint8_t> room = sink.room();
      if (room.empty()) return problems.too_big();
      stream.next_in = in.data() + pos;
      stream.avail_in = in.size() - pos;
      stream.next_out = room.data();
      stream.avail_out = room.size();
      const lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
      pos = in.size() - stream.avail_in;
      sink.commit(room.size() - stream.avail_out);
      if (sink.over_limit()) return problems.too_big();
      if (ret == LZMA_STREAM_END) break;
      if (ret == LZMA_BUF_ERROR) return problems.truncated();
      if (ret != LZMA_OK) return problems.corrupt(lzma_problem(ret));
    }
  } while (starts_with(in.subspan(pos), kXzMagic));
  return sink.take();
}

// Mirrors lib/decompress_unlz4.c: a magic, then blocks of (u32 compressed size, data), each
// decoding to at most 8 MiB; a repeated magic is skipped. The kernel's decompressor is handed the
// payload minus its last 4 bytes (the appended size) and stops when the input runs out; here the
// stream also ends when exactly 4 bytes remain, which is that appended size.
Result<std::vector<uint8_t>> decode_lz4_legacy(std::span<const uint8_t> in, const Problems& problems, Sink& sink) {
  constexpr size_t kSizeField = 4;
  const size_t max_block = static_cast<size_t>(LZ4_compressBound(kLz4LegacyBlockSize));
  // A block holds up to 8 MiB; a smaller limit needs no more room than one byte past it.
  // Not zero-filled: the decoder writes what is read back.
  const size_t block_capacity = static_cast<size_t>(std::min<uint64_t>(kLz4LegacyBlockSize, problems.max_output + 1));
  std::unique_ptr<uint8_t[]> block(new uint8_t[block_capacity]);
  size_t pos = sizeof(kLz4LegacyMagic);
  bool saw_short_block = false;
  while (in.size() - pos > kSizeField) {
    const uint32_t block_size = load_le<uint32_t>(in.data() + pos);
    pos += kSizeField;
    if (std::memcmp(in.data() + pos - kSizeField, kLz4LegacyMagic, kSizeField) == 0) {
      saw_short_block = false;
      continue;
    }
    // Only the last block of an archive may hold less than a full block.
    if (saw_short_block)
      return problems.corrupt("data after the last block at offset " + std::to_string(pos - kSizeField));
    if (block_size == 0 || block_size > max_block)
      return problems.corrupt("block of " + std::to_string(block_size) + " bytes at offset " +
                              std::to_string(pos - kSizeField));
    if (block_size > in.size() - pos) return problems.truncated();
    const int decoded =
        LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + pos), reinterpret_cast<char*>(block.get()),
                            static_cast<int>(block_size), static_cast<int>(block_capacity));
    if (decoded < 0 && block_capacity < kLz4LegacyBlockSize &&
        LZ4_decompress_safe_partial(reinterpret_cast<const char*>(in.data() + pos),
                                    reinterpret_cast<char*>(block.get()), static_cast<int>(block_size),
                                    static_cast<int>(block_capacity),
                                    static_cast<int>(block_capacity)) == static_cast<int>(block_capacity))
      return problems.too_big();
    if (decoded < 0)
      return problems.corrupt("block at offset " + std::to_string(pos - kSizeField) + " does not decode");
    pos += block_size;
    saw_short_block = static_cast<size_t>(decoded) < kLz4LegacyBlockSize;
    size_t copied = 0;
    while (copied < static_cast<size_t>(decoded)) {
      const std::span<uint8_t> room = sink.room();
      if (room.empty()) return problems.too_big();
      const size_t n = std::min(room.size(), static_cast<size_t>(decoded) - copied);
      std::memcpy(room.data(), block.get() + copied, n);
      sink.commit(n);
      copied += n;
    }
    if (sink.over_limit()) return problems.too_big();
  }
  return sink.take();
}

Result<std::vector<uint8_t>> decode_lz4_frame(std::span<const uint8_t> in, const Problems& problems, Sink& sink) {
  // One context per thread, reset per call: a context allocates its block buffers (up to 4 MiB
  // each) on first use, and `kpack info`, extract and the fuzzers decode many small frames.
  thread_local std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> ctx(nullptr,
                                                                                        &LZ4F_freeDecompressionContext);
  if (!ctx) {
    LZ4F_dctx* raw_ctx = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&raw_ctx, LZ4F_VERSION)))
      return problems.file.error("lz4: cannot create a decompression context");
    ctx.reset(raw_ctx);
  }
  LZ4F_resetDecompressionContext(ctx.get());

  size_t pos = 0;
  do {
    // LZ4F_decompress returns 0 once a frame (with its checksum) is complete, and then expects a
    // new frame; it never reads past the end of the current one.
    for (;;) {
      const std::span<uint8_t> room = sink.room();
      if (room.empty()) return problems.too_big();
      size_t out_size = room.size();
      size_t in_size = in.size() - pos;
      const size_t hint = LZ4F_decompress(ctx.get(), room.data(), &out_size, in.data() + pos, &in_size, nullptr);
      pos += in_size;
      sink.commit(out_size);
      if (LZ4F_isError(hint)) return problems.corrupt(LZ4F_getErrorName(hint));
      if (sink.over_limit()) return problems.too_big();
      if (hint == 0) break;
      if (pos == in.size() && out_size < room.size()) return problems.truncated();
    }
  } while (starts_with(in.subspan(pos), kLz4FrameMagic));
  return sink.take();
}

Result<std::vector<uint8_t>> decode_zstd(std::span<const uint8_t> in, const Problems& problems, Sink& sink) {
  // One context per thread, as for lz4: its window buffers are allocated once.
  thread_local std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!ctx) return problems.file.error("zstd: cannot create a decompression context");

  size_t pos = 0;
  do {
    // Bounding the input to one frame finds truncation before decoding and keeps the decoder
    // from mistaking trailing bytes for the next frame.
    const size_t frame_size = ZSTD_findFrameCompressedSize(in.data() + pos, in.size() - pos);
    if (ZSTD_isError(frame_size)) {
      if (ZSTD_getErrorCode(frame_size) == ZSTD_error_srcSize_wrong) return problems.truncated();
      return problems.corrupt(ZSTD_getErrorName(frame_size));
    }
    ZSTD_DCtx_reset(ctx.get(), ZSTD_reset_session_only);
    ZSTD_inBuffer input{in.data() + pos, frame_size, 0};
    for (;;) {
      const std::span<uint8_t> room = sink.room();
      if (room.empty()) return problems.too_big();
      ZSTD_outBuffer output{room.data(), room.size(), 0};
      const size_t ret = ZSTD_decompressStream(ctx.get(), &output, &input);
      sink.commit(output.pos);
      if (ZSTD_isError(ret)) return problems.corrupt(ZSTD_getErrorName(ret));
      if (sink.over_limit()) return problems.too_big();
      if (ret == 0) break;
      if (input.pos == input.size && output.pos < output.size) return problems.truncated();
    }
    pos += frame_size;
  } while (starts_with(in.subspan(pos), kZstdMagic));
  return sink.take();
}

}  // namespace

std::optional<StreamFormat> detect_stream_format(std::span<const uint8_t> payload) {
  if (starts_with(payload, kGzipMagic)) return StreamFormat::kGzip;
  if (starts_with(payload, kXzMagic)) return StreamFormat::kXz;
  if (starts_with(payload, kLz4LegacyMagic)) return StreamFormat::kLz4Legacy;
  if (starts_with(payload, kLz4FrameMagic)) return StreamFormat::kLz4Frame;
  if (starts_with(payload, kZstdMagic)) return StreamFormat::kZstd;
  if (starts_with(payload, kBzip2Magic)) return StreamFormat::kBzip2;
  if (starts_with(payload, kLzmaMagic)) return StreamFormat::kLzma;
  if (starts_with(payload, kLzoMagic)) return StreamFormat::kLzo;
  if (starts_with(payload, elf::kMagic)) return StreamFormat::kRaw;
  return std::nullopt;
}

Result<std::vector<uint8_t>> decode_stream(StreamFormat format, const FileView& file, uint64_t max_output) {
  const Problems problems{file, stream_format_name(format), max_output};
  std::span<const uint8_t> payload = file.bytes;
  Sink sink(max_output);
  // The stream must start with its format's magic before its decoder sees it.
  auto decode_with = [&](const auto& magic, auto decoder) -> Result<std::vector<uint8_t>> {
    if (starts_with(payload, magic)) return decoder(payload, problems, sink);
    return payload.size() < sizeof(magic) ? problems.truncated() : problems.corrupt("bad magic");
  };
  switch (format) {
    case StreamFormat::kRaw:
      if (payload.size() > max_output) return problems.too_big();
      return std::vector<uint8_t>(payload.begin(), payload.end());
    case StreamFormat::kGzip: return decode_with(kGzipMagic, decode_gzip);
    case StreamFormat::kXz: return decode_with(kXzMagic, decode_xz);
    case StreamFormat::kLz4Legacy: return decode_with(kLz4LegacyMagic, decode_lz4_legacy);
    case StreamFormat::kLz4Frame: return decode_with(kLz4FrameMagic, decode_lz4_frame);
    case StreamFormat::kZstd: return decode_with(kZstdMagic, decode_zstd);
    case StreamFormat::kBzip2:
    case StreamFormat::kLzma:
    case StreamFormat::kLzo: break;
  }
  return file.error(std::string("payload is compressed with ") + stream_format_name(format) +
                    ", which kpack does not read");
}

}  // namespace kpack
