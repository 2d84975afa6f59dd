#include "stub/unpack/frame_decoder.h"

#include "stub/unpack/codec_config.h"
#include "stub/unpack/stub_codec.h"
#include "formats/frame_format.h"
#include "formats/le.h"
#include "stub/unpack/xxh3.h"

namespace kpack {
namespace {

voidpf zlib_alloc(voidpf opaque, uInt items, uInt size) {
  return static_cast<Arena*>(opaque)->allocate(uint64_t{items} * size);
}
void zlib_free(voidpf, voidpf) {}

void* xz_alloc(void* opaque, size_t count, size_t size) {
  return static_cast<Arena*>(opaque)->allocate(uint64_t{count} * size);
}
void xz_free(void*, void*) {}

using namespace frame;

// A stub has its own codec's decoder only (stub_codec.h); the host engine has every decoder.
constexpr bool has_decoder(Codec codec) { return codec != Codec::kRaw && engine_meets(codec); }

}  // namespace

Lz4History lz4_history(const uint8_t* region, uint64_t written) {
  uint64_t size = written < kLz4HistorySize ? written : kLz4HistorySize;
  return Lz4History{region + written - size, size};
}

StubStatus codec_state_size(Codec codec, const uint8_t* payload, uint64_t size, uint64_t* bytes) {
  *bytes = 0;
  if (!has_decoder(Codec::kXz) || codec != Codec::kXz) return StubStatus::success();
  lzma_stream_flags stream;
  if (size < LZMA_STREAM_HEADER_SIZE + 1 || lzma_stream_header_decode(&stream, payload) != LZMA_OK)
    return fail("not an xz stream");
  const uint8_t* header = payload + LZMA_STREAM_HEADER_SIZE;
  lzma_filter filters[LZMA_FILTERS_MAX + 1];
  lzma_block block{};
  block.check = stream.check;
  block.filters = filters;
  block.header_size = lzma_block_header_size_decode(header[0]);
  if (header[0] == 0 || size - LZMA_STREAM_HEADER_SIZE < block.header_size) return fail("xz stream without a block");
  // The filters' options are allocated here and dropped on return.
  alignas(16) uint8_t options[1024];
  Arena arena(options, sizeof(options));
  lzma_allocator allocator{xz_alloc, xz_free, &arena};
  if (lzma_block_header_decode(&block, &allocator, header) != LZMA_OK) return fail("bad xz block header");
  uint64_t usage = lzma_raw_decoder_memusage(filters);
  if (usage == UINT64_MAX) return fail("unsupported xz filters");
  *bytes = usage;
  return StubStatus::success();
}

StubStatus FrameDecoder::init(Codec codec, Arena& arena, bool require_frame_check) {
  codec_ = codec;
  require_frame_check_ = require_frame_check;
  if constexpr (has_decoder(Codec::kLz4) || has_decoder(Codec::kZstd)) xxh3_ = xxh3_for_this_cpu();
  arena_ = &arena;
  if (!has_decoder(codec)) return fail("unknown payload codec", static_cast<uint32_t>(codec));
  if (has_decoder(Codec::kZstd) && codec == Codec::kZstd) {
    uint64_t size = ZSTD_estimateDCtxSize();
    void* memory = arena.allocate(size, 64);
    zstd_ = memory ? ZSTD_initStaticDCtx(memory, size) : nullptr;
    if (!zstd_) return fail("no memory for the zstd decoder", size);
  } else if (has_decoder(Codec::kGzip) && codec == Codec::kGzip) {
    zlib_ = static_cast<z_stream*>(arena.allocate(sizeof(z_stream)));
    if (!zlib_) return fail("no memory for the gzip decoder");
    *zlib_ = z_stream{};
    zlib_->zalloc = zlib_alloc;
    zlib_->zfree = zlib_free;
    zlib_->opaque = &arena;
    if (inflateInit2(zlib_, 16 + MAX_WBITS) != Z_OK) return fail("cannot set up the gzip decoder");
  }
  return StubStatus::success();
}

StubStatus FrameDecoder::decode(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, bool exact,
                                uint64_t* consumed, uint64_t* produced) {
  *consumed = *produced = 0;
  StubStatus status = fail("unknown payload codec", static_cast<uint32_t>(codec_));
  if (has_decoder(Codec::kGzip) && codec_ == Codec::kGzip)
    status = decode_gzip(src, available, dst, capacity, consumed, produced);
  if (has_decoder(Codec::kLz4) && codec_ == Codec::kLz4)
    status = decode_lz4(src, available, dst, capacity, consumed, produced);
  if (has_decoder(Codec::kZstd) && codec_ == Codec::kZstd)
    status = decode_zstd(src, available, dst, capacity, consumed, produced);
  if (has_decoder(Codec::kXz) && codec_ == Codec::kXz)
    status = decode_xz(src, available, dst, capacity, consumed, produced);
  if (status.ok() && exact && *produced != capacity)
    return fail("payload frame has the wrong size", *produced, capacity);
  return status;
}

bool FrameDecoder::xxh3_matches(const uint8_t* src, uint64_t size, uint64_t expected) const {
  if constexpr (has_decoder(Codec::kLz4) || has_decoder(Codec::kZstd)) return xxh3_(src, size) == expected;
  return false;
}

StubStatus FrameDecoder::decode_gzip(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                                     uint64_t* consumed, uint64_t* produced) {
  if (capacity > 0xFFFFFFFFu) return fail("region too large for one gzip member", capacity);
  if (inflateReset(zlib_) != Z_OK) return fail("cannot reset the gzip decoder");
  zlib_->next_in = const_cast<Bytef*>(src);
  zlib_->avail_in = available > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uInt>(available);
  zlib_->next_out = dst;
  zlib_->avail_out = static_cast<uInt>(capacity);
  // One call with Z_FINISH: inflate writes straight into dst and, finishing in one go, never
  // copies its output into a window. It checks the member's CRC32 and ISIZE itself.
  int result = inflate(zlib_, Z_FINISH);
  if (result != Z_STREAM_END) {
    if (result == Z_BUF_ERROR && zlib_->avail_out == 0) return fail("gzip member larger than its region", capacity);
    if (result == Z_BUF_ERROR) return fail("gzip member truncated");
    return fail("corrupt gzip member (bad data or CRC32)", static_cast<uint64_t>(-result));
  }
  *consumed = zlib_->total_in;
  *produced = zlib_->total_out;
  return StubStatus::success();
}

namespace {

// What decode_lz4 takes from an LZ4 frame's descriptor.
struct Lz4Frame {
  uint8_t flags = 0;
  uint64_t max_block = 0;
  uint64_t at = 0;  // where the next block starts in the frame
};

// The frame descriptor, checked down to its own checksum; a content size it declares must fit `capacity`.
StubStatus read_lz4_descriptor(const uint8_t* src, uint64_t available, uint64_t capacity, bool require_frame_check,
                               Lz4Frame* frame) {
  if (available < 7 || __builtin_memcmp(src, kLz4FrameMagic, sizeof(kLz4FrameMagic)) != 0)
    return fail("not an LZ4 frame");
  uint8_t flags = src[4], block_descriptor = src[5];
  if ((flags & kLz4VersionMask) != kLz4Version || (flags & (kLz4Reserved | kLz4DictId)) ||
      (block_descriptor & kLz4BlockDescriptorReserved))
    return fail("unsupported LZ4 frame descriptor", flags, block_descriptor);
  if (require_frame_check && !(flags & kLz4ContentChecksum)) return fail("LZ4 frame has no content checksum");
  uint32_t block_size_id = block_descriptor >> 4;
  if (block_size_id < 4) return fail("bad LZ4 block size", block_size_id);
  uint64_t at = 6;
  if (flags & kLz4ContentSize) {
    if (available < at + 9) return fail("LZ4 frame truncated");
    if (load_le<uint64_t>(src + at) > capacity)
      return fail("LZ4 frame larger than its region", load_le<uint64_t>(src + at), capacity);
    at += 8;
  }
  if (((lz4_xxh32(src + 4, at - 4, 0) >> 8) & 0xFF) != src[at]) return fail("LZ4 frame descriptor checksum mismatch");
  *frame = Lz4Frame{flags, uint64_t{1} << (2 * block_size_id + 8), at + 1};
  return StubStatus::success();
}

// The blocks up to the end mark, each straight to its place in dst and proved by its own checksum
// when the frame carries them.
StubStatus decode_lz4_blocks(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity, Lz4Frame& frame,
                             uint64_t* produced) {
  uint64_t at = frame.at, written = 0;
  for (;;) {
    if (available - at < 4) return fail("LZ4 frame truncated");
    uint32_t block = load_le<uint32_t>(src + at);
    at += 4;
    if (block == 0) break;
    uint64_t size = block & ~kLz4Uncompressed;
    if (size > frame.max_block) return fail("LZ4 block larger than the frame's block size", size);
    if (available - at < size) return fail("LZ4 frame truncated");
    uint64_t room = capacity - written < frame.max_block ? capacity - written : frame.max_block;
    if (block & kLz4Uncompressed) {
      if (size > room) return fail("LZ4 frame larger than its region", capacity);
      __builtin_memcpy(dst + written, src + at, size);
      written += size;
    } else {
      // Linked blocks refer back into what this region already holds, still in place right
      // before dst + written: the prefix form of the dictionary API.
      Lz4History history =
          (frame.flags & kLz4BlockIndependent) ? Lz4History{dst + written, 0} : lz4_history(dst, written);
      int n = LZ4_decompress_safe_usingDict(
          reinterpret_cast<const char*>(src + at), reinterpret_cast<char*>(dst + written), static_cast<int>(size),
          static_cast<int>(room), reinterpret_cast<const char*>(history.begin), static_cast<int>(history.size));
      if (n < 0) return fail("corrupt LZ4 block", at);
      written += static_cast<uint64_t>(n);
    }
    at += size;
    if (frame.flags & kLz4BlockChecksum) {
      if (available - at < 4) return fail("LZ4 frame truncated");
      if (lz4_xxh32(src + at - size, size, 0) != load_le<uint32_t>(src + at))
        return fail("LZ4 block checksum mismatch");
      at += 4;
    }
  }
  frame.at = at;
  *produced = written;
  return StubStatus::success();
}

}  // namespace

StubStatus FrameDecoder::decode_lz4(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                                    uint64_t* consumed, uint64_t* produced) {
  Lz4Frame frame;
  KPACK_TRY(read_lz4_descriptor(src, available, capacity, require_frame_check_, &frame));
  uint64_t written = 0;
  KPACK_TRY(decode_lz4_blocks(src, available, dst, capacity, frame, &written));
  uint64_t at = frame.at;
  // The content checksum and size cover the whole region, whatever the blocks proved on their own.
  if (frame.flags & kLz4ContentChecksum) {
    if (available - at < 4) return fail("LZ4 frame truncated");
    if (lz4_xxh32(dst, written, 0) != load_le<uint32_t>(src + at)) return fail("LZ4 content checksum mismatch");
    at += 4;
  }
  if ((frame.flags & kLz4ContentSize) && load_le<uint64_t>(src + 6) != written)
    return fail("LZ4 frame size mismatch", written);
  *consumed = at;
  *produced = written;
  return StubStatus::success();
}

StubStatus FrameDecoder::decode_zstd(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                                     uint64_t* consumed, uint64_t* produced) {
  ZSTD_frameHeader header;
  size_t result = ZSTD_getFrameHeader(&header, src, available);
  if (ZSTD_isError(result) || result != 0 || header.frameType != ZSTD_frame) return fail("not a zstd frame");
  if (require_frame_check_ && !header.checksumFlag) return fail("zstd frame has no content checksum");
  if (header.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN && header.frameContentSize > capacity)
    return fail("zstd frame larger than its region", header.frameContentSize, capacity);
  // zstd's buffer-less API, block by block, straight into the destination: the frame's history is
  // the region itself, so zstd needs no window buffer, and it verifies the frame's XXH64 (if any)
  // on the last block. Not ZSTD_decompressDCtx or ZSTD_findFrameCompressedSize: through them
  // Debian's libzstd links its legacy v0.5-v0.7 decoders, 75 KiB of stub that no kpack frame uses.
  result = ZSTD_decompressBegin(zstd_);
  if (ZSTD_isError(result)) return fail("corrupt zstd frame", ZSTD_getErrorCode(result));
  uint64_t in = 0, out = 0;
  for (size_t need; (need = ZSTD_nextSrcSizeToDecompress(zstd_)) != 0; in += need) {
    if (need > available - in) return fail("corrupt or truncated zstd frame");
    result = ZSTD_decompressContinue(zstd_, dst + out, capacity - out, src + in, need);
    if (ZSTD_isError(result)) {
      if (ZSTD_getErrorCode(result) == ZSTD_error_checksum_wrong) return fail("zstd content checksum mismatch");
      if (ZSTD_getErrorCode(result) == ZSTD_error_dstSize_tooSmall)
        return fail("zstd frame larger than its region", capacity);
      return fail("corrupt zstd frame", ZSTD_getErrorCode(result));
    }
    out += result;
  }
  *consumed = in;
  *produced = out;
  return StubStatus::success();
}

StubStatus FrameDecoder::decode_xz(const uint8_t* src, uint64_t available, uint8_t* dst, uint64_t capacity,
                                   uint64_t* consumed, uint64_t* produced) {
  // Every frame is a whole .xz stream with a decoder of its own, whose dictionary and filter state
  // live in the arena for this frame only; the arena's room is the decoder's memory limit.
  // CRC32 only, as the packer writes: the stub carries no other check (stub/runtime/liblzma_crc64.cc).
  lzma_stream_flags flags;
  if (available >= LZMA_STREAM_HEADER_SIZE && lzma_stream_header_decode(&flags, src) == LZMA_OK) {
    if (flags.check == LZMA_CHECK_NONE) return fail("xz stream has no check");
    if (flags.check != LZMA_CHECK_CRC32) return fail("xz stream has a check the stub cannot verify");
  }
  uint8_t* mark = arena_->mark();
  lzma_allocator allocator{xz_alloc, xz_free, arena_};
  lzma_stream stream = LZMA_STREAM_INIT;
  stream.allocator = &allocator;
  lzma_ret ret = lzma_stream_decoder(&stream, arena_->available(), LZMA_TELL_NO_CHECK | LZMA_TELL_UNSUPPORTED_CHECK);
  if (ret == LZMA_OK) {
    stream.next_in = src;
    stream.avail_in = available;
    stream.next_out = dst;
    stream.avail_out = capacity;
    // liblzma decodes into its dictionary and copies out to dst; it verifies the block's sizes and
    // check (CRC32 from the packer), the index and the footer before reporting the stream's end.
    ret = lzma_code(&stream, LZMA_FINISH);
  }
  arena_->release(mark);
  switch (ret) {
    case LZMA_STREAM_END: break;
    case LZMA_OK:
    case LZMA_BUF_ERROR:
      if (stream.avail_out == 0) return fail("xz stream larger than its region", capacity);
      return fail("xz stream truncated");
    case LZMA_NO_CHECK: return fail("xz stream has no check");
    case LZMA_UNSUPPORTED_CHECK: return fail("xz stream has a check the stub cannot verify");
    case LZMA_MEM_ERROR:
    case LZMA_MEMLIMIT_ERROR: return fail("xz stream needs more memory than the first one's headers said");
    case LZMA_FORMAT_ERROR: return fail("not an xz stream");
    case LZMA_OPTIONS_ERROR: return fail("unsupported xz stream options");
    default: return fail("corrupt xz stream (bad data or check)", static_cast<uint32_t>(ret));
  }
  *consumed = stream.total_in;
  *produced = stream.total_out;
  return StubStatus::success();
}

}  // namespace kpack
