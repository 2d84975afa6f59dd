// Compression side of the codecs: one self-describing frame per piece. Every frame records its
// content size, so the stub can size its output before decoding; what proves the content is the
// frame's own check (gzip, xz) or the frame table's XXH3 (lz4, zstd: their checks would only
// repeat it, slower).
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "packer/codecs/codecs.h"

namespace kpack {

int default_level(Codec codec) {
  switch (codec) {
    case Codec::kRaw: return 0;
    case Codec::kGzip: return 9;
    case Codec::kLz4: return 12;  // with favorDecSpeed (append_lz4)
    case Codec::kZstd: return 19;
    case Codec::kXz: return 9;
  }
  return 0;
}

int min_level(Codec codec) { return codec == Codec::kRaw ? 0 : 1; }

int max_level(Codec codec) {
  switch (codec) {
    case Codec::kRaw: return 0;
    case Codec::kGzip: return 9;
    case Codec::kLz4: return 12;
    case Codec::kZstd: return 22;
    case Codec::kXz: return 9;
  }
  return 0;
}

uint64_t xz_dictionary_for(int level, uint64_t largest) {
  lzma_options_lzma preset{};
  lzma_lzma_preset(&preset, static_cast<uint32_t>(level));
  return std::clamp<uint64_t>(largest, LZMA_DICT_SIZE_MIN, preset.dict_size);
}

namespace {

Status append_gzip(const Context& ctx, int level, std::span<const uint8_t> region, std::vector<uint8_t>& out) {
  z_stream stream{};
  // windowBits 15 + 16 asks zlib for a gzip wrapper: header, CRC32 and ISIZE trailer.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return ctx.about_output("gzip: cannot initialise the compressor");
  std::unique_ptr<z_stream, decltype(&deflateEnd)> guard(&stream, &deflateEnd);

  const size_t start = out.size();
  out.resize(start + deflateBound(&stream, region.size()));
  // zlib counts in uInt, so feed regions larger than 4 GiB in pieces.
  constexpr size_t kMaxPiece = std::numeric_limits<uInt>::max();
  size_t in_pos = 0;
  size_t out_pos = start;
  for (;;) {
    const size_t in_piece = std::min(region.size() - in_pos, kMaxPiece);
    const bool last = in_pos + in_piece == region.size();
    stream.next_in = const_cast<Bytef*>(region.data() + in_pos);
    stream.avail_in = static_cast<uInt>(in_piece);
    if (out.size() - out_pos < 64) out.resize(out.size() + (1 << 16));
    stream.next_out = out.data() + out_pos;
    stream.avail_out = static_cast<uInt>(std::min(out.size() - out_pos, kMaxPiece));
    const uInt avail_out_before = stream.avail_out;
    const int ret = deflate(&stream, last ? Z_FINISH : Z_NO_FLUSH);
    in_pos += in_piece - stream.avail_in;
    out_pos += avail_out_before - stream.avail_out;
    if (ret == Z_STREAM_END) break;
    if (ret != Z_OK && ret != Z_BUF_ERROR)
      return ctx.about_output(std::string("gzip compression failed: ") + (stream.msg ? stream.msg : "zlib error"));
  }
  out.resize(out_pos);
  return Ok{};
}

Status append_lz4(const Context& ctx, int level, std::span<const uint8_t> region, std::vector<uint8_t>& out) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentChecksumFlag =
      digest_for(Codec::kLz4) == FrameDigest::kXxh3 ? LZ4F_noContentChecksum : LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.frameInfo.frameType = LZ4F_frame;
  prefs.frameInfo.contentSize = region.size();  // LZ4F reads 0 as "unknown": an empty region has no size field
  prefs.compressionLevel = level;               // LZ4F switches to the HC compressor from level 3 on
  // autoFlush compresses straight from the region, blocks cut where they would be anyway, instead
  // of copying it through a block-sized buffer that LZ4F would calloc (4 MiB) for every frame.
  prefs.autoFlush = 1;
  // The stub decodes on every boot, the packer once: from level 10 on (LZ4HC's optimal parser) this
  // leaves out matches that cost the decoder more than their bytes save. On Debian 12's 6.1 kernel,
  // level 12 with it against level 9 without: 0.64 % more bytes, 2.1 M fewer stub instructions
  // (doc/benchmark-history.md, "lz4 parsed for the decoder").
  prefs.favorDecSpeed = 1;

  LZ4F_cctx* raw_ctx = nullptr;
  if (LZ4F_isError(LZ4F_createCompressionContext(&raw_ctx, LZ4F_VERSION)))
    return ctx.about_output("lz4: cannot create a compression context");
  std::unique_ptr<LZ4F_cctx, decltype(&LZ4F_freeCompressionContext)> cctx(raw_ctx, &LZ4F_freeCompressionContext);

  // The streaming API keeps the 4 MiB block size; LZ4F_compressFrame would shrink it to fit
  // small inputs, and the stub relies on one fixed block size.
  const size_t start = out.size();
  out.resize(start + LZ4F_HEADER_SIZE_MAX + LZ4F_compressBound(region.size(), &prefs));
  size_t pos = start;
  auto check = [&](size_t ret) -> bool {
    if (LZ4F_isError(ret)) return false;
    pos += ret;
    return true;
  };
  if (!check(LZ4F_compressBegin(cctx.get(), out.data() + pos, out.size() - pos, &prefs)) ||
      !check(
          LZ4F_compressUpdate(cctx.get(), out.data() + pos, out.size() - pos, region.data(), region.size(), nullptr)) ||
      !check(LZ4F_compressEnd(cctx.get(), out.data() + pos, out.size() - pos, nullptr))) {
    out.resize(start);
    return ctx.about_output("lz4 compression failed");
  }
  out.resize(pos);
  return Ok{};
}

Status append_zstd(const Context& ctx, int level, unsigned threads, std::span<const uint8_t> region,
                   std::vector<uint8_t>& out) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!cctx) return ctx.about_output("zstd: cannot create a compression context");
  auto set = [&](ZSTD_cParameter param, int value) -> bool {
    return !ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), param, value));
  };
  if (!set(ZSTD_c_compressionLevel, level) ||
      !set(ZSTD_c_checksumFlag, digest_for(Codec::kZstd) != FrameDigest::kXxh3) || !set(ZSTD_c_contentSizeFlag, 1))
    return ctx.about_output("zstd: cannot set the compression parameters");
  if (threads > 1 && !set(ZSTD_c_nbWorkers, static_cast<int>(threads)))
    return ctx.about_output("zstd: this libzstd cannot compress with several threads");

  // ZSTD_compress2 is one-shot, so it knows the source size and writes it into the frame header.
  const size_t start = out.size();
  out.resize(start + ZSTD_compressBound(region.size()));
  const size_t written =
      ZSTD_compress2(cctx.get(), out.data() + start, out.size() - start, region.data(), region.size());
  if (ZSTD_isError(written)) {
    out.resize(start);
    return ctx.about_output(std::string("zstd compression failed: ") + ZSTD_getErrorName(written));
  }
  out.resize(start + written);
  return Ok{};
}

// liblzma allocates its encoder afresh for every frame: a few hundred KiB of tables even at
// level 1. Mapping, zeroing and faulting in those pages cost more than compressing a small frame
// (fuzz_pack spent 62 % of its time there under ASan), so each thread keeps the blocks its last
// frames freed and hands them out again. Blocks are kept only up to kKeptBytes: the big
// dictionaries of high levels go back to the system as before.
class ReusedBlocks {
 public:
  ReusedBlocks() { kept_.reserve(kMaxKept); }
  ReusedBlocks(const ReusedBlocks&) = delete;
  ReusedBlocks& operator=(const ReusedBlocks&) = delete;
  ~ReusedBlocks() {
    for (Block block : kept_) std::free(block.start);
  }
  static lzma_allocator& allocator() {
    thread_local ReusedBlocks blocks;
    thread_local lzma_allocator allocator{&ReusedBlocks::alloc, &ReusedBlocks::release, &blocks};
    return allocator;
  }

 private:
  // Each block starts with its size, so that `release`, which liblzma gives only the pointer,
  // can keep it for a later request of that size.
  struct Block {
    void* start;
    size_t size;
  };
  static constexpr size_t kHeader = alignof(std::max_align_t), kKeptBytes = 64 << 20, kMaxKept = 32;

  static void* alloc(void* opaque, size_t count, size_t size) {
    if (size != 0 && count > (std::numeric_limits<size_t>::max() - kHeader) / size) return nullptr;
    return static_cast<ReusedBlocks*>(opaque)->take(count * size);
  }
  static void release(void* opaque, void* ptr) {
    if (ptr) static_cast<ReusedBlocks*>(opaque)->keep(static_cast<uint8_t*>(ptr) - kHeader);
  }
  // The smallest kept block that fits, unless it is more than twice the request.
  void* take(size_t size) {
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->size >= size && it->size / 2 <= size && (best == kept_.end() || it->size < best->size)) best = it;
    void* start = nullptr;
    if (best != kept_.end()) {
      start = best->start;
      kept_bytes_ -= best->size;
      kept_.erase(best);
    } else {
      start = std::malloc(kHeader + size);
      if (!start) return nullptr;
      *static_cast<size_t*>(start) = size;
    }
    return static_cast<uint8_t*>(start) + kHeader;
  }
  void keep(void* start) {
    const size_t size = *static_cast<size_t*>(start);
    // No allocation here: liblzma calls this from C, where an exception must not pass.
    if (kept_bytes_ + size > kKeptBytes || kept_.size() == kMaxKept) return std::free(start);
    kept_.push_back({start, size});
    kept_bytes_ += size;
  }

  std::vector<Block> kept_;
  size_t kept_bytes_ = 0;
};

// One .xz stream (xz decodes the payload), CRC32 checked as in stock images: LZMA2, behind a
// filter that suits the region's content (see Content).
Status append_xz(const Context& ctx, const CompressOptions& options, int level, std::span<const uint8_t> region,
                 std::vector<uint8_t>& out) {
  lzma_options_lzma lzma{};
  if (lzma_lzma_preset(&lzma, static_cast<uint32_t>(level))) return ctx.about_output("xz: bad preset");
  lzma.dict_size =
      static_cast<uint32_t>(options.xz_dictionary ? options.xz_dictionary : xz_dictionary_for(level, region.size()));
  if (level == 9) lzma.nice_len = 273;  // 17 KB smaller than the preset's 64
  lzma.lc = 4;
  if (options.content == Content::kData) lzma.lc = 0, lzma.lp = 2, lzma.pb = 2;
  if (options.content == Content::kTable) lzma.lc = 0, lzma.lp = 0, lzma.pb = 0;
  lzma_filter filters[3] = {{LZMA_VLI_UNKNOWN, nullptr}, {LZMA_FILTER_LZMA2, &lzma}, {LZMA_VLI_UNKNOWN, nullptr}};
  if (options.content == Content::kCode) filters[0] = {LZMA_FILTER_X86, nullptr};
  const lzma_filter* chain = filters[0].id == LZMA_VLI_UNKNOWN ? filters + 1 : filters;
  const size_t start = out.size();
  out.resize(start + lzma_stream_buffer_bound(region.size()));
  size_t pos = start;
  lzma_ret ret =
      lzma_stream_buffer_encode(const_cast<lzma_filter*>(chain), LZMA_CHECK_CRC32, &ReusedBlocks::allocator(),
                                region.data(), region.size(), out.data(), &pos, out.size());
  if (ret != LZMA_OK) {
    out.resize(start);
    if (ret == LZMA_MEM_ERROR) throw std::bad_alloc();
    return ctx.about_output("xz compression failed (liblzma error " + std::to_string(static_cast<int>(ret)) + ")");
  }
  out.resize(pos);
  return Ok{};
}

}  // namespace

Status append_frame(const Context& ctx, const CompressOptions& options, std::span<const uint8_t> region,
                    std::vector<uint8_t>& out) {
  const int level = options.level == 0 ? default_level(options.codec) : options.level;
  if (level < min_level(options.codec) || level > max_level(options.codec))
    return ctx.about_output(std::string(codec_name(options.codec)) + " level " + std::to_string(level) +
                            " is out of range " + std::to_string(min_level(options.codec)) + ".." +
                            std::to_string(max_level(options.codec)));
  switch (options.codec) {
    case Codec::kRaw: out.insert(out.end(), region.begin(), region.end()); return Ok{};
    case Codec::kGzip: return append_gzip(ctx, options.fast_decode ? Z_NO_COMPRESSION : level, region, out);
    case Codec::kLz4: return append_lz4(ctx, level, region, out);
    case Codec::kZstd: return append_zstd(ctx, options.fast_decode ? 3 : level, options.threads, region, out);
    case Codec::kXz: return append_xz(ctx, options, level, region, out);
  }
  return ctx.about_output("unknown codec " + std::to_string(static_cast<uint32_t>(options.codec)));
}

}  // namespace kpack
