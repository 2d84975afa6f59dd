// Codec tests: the exact frame headers the stub relies on, round trips over concatenated frames,
// the trailing size stock images append, and every way a payload can be damaged.
#include <doctest/doctest.h>
#include <lz4.h>
#include <lz4frame.h>
#include <lz4hc.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "packer/codecs/codecs.h"
#include "tests/support/bytes.h"
#include "tests/support/checked_frames.h"
#include "packer/image/frames.h"

using namespace kpack;
using test::append_le32;
using test::le32_at;

namespace {

// Compressible but not trivial: words from a small vocabulary in a pseudo-random order.
std::vector<uint8_t> sample(size_t size, uint32_t seed) {
  static const char* const kWords[] = {"kernel ", "page ", "0xffffffff81000000 ", "boot ",    "\n",
                                       "relocs ", "zstd ", "\x7f\x01\x02",        "segment ", "\0\0\0\0"};
  std::vector<uint8_t> out;
  out.reserve(size + 32);
  uint32_t state = seed;
  while (out.size() < size) {
    state = state * 1664525 + 1013904223;
    const char* word = kWords[(state >> 24) % 10];
    const size_t len = (state >> 24) % 10 == 9 ? 4 : std::strlen(word);
    out.insert(out.end(), word, word + len);
    if ((state & 0xF) == 0) out.push_back(static_cast<uint8_t>(state >> 8));
  }
  out.resize(size);
  return out;
}

std::vector<uint8_t> frame(Codec codec, std::span<const uint8_t> data, int level = 0, unsigned threads = 1) {
  std::vector<uint8_t> out;
  const Status status = append_frame(Context{.output = "out.img"}, {codec, level, threads}, data, out);
  REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().message));
  return out;
}

std::vector<uint8_t> concat(std::initializer_list<std::span<const uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (auto part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

std::vector<uint8_t> xz_stream(std::span<const uint8_t> data) {
  std::vector<uint8_t> out(lzma_stream_buffer_bound(data.size()));
  size_t pos = 0;
  REQUIRE(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, nullptr, data.data(), data.size(), out.data(), &pos,
                                  out.size()) == LZMA_OK);
  out.resize(pos);
  return out;
}

// Where a one-block stream's CRC32 starts, counted from its end: before the index (whose size the
// footer records as Backward Size) and the 12-byte footer.
size_t xz_check_from_end(const std::vector<uint8_t>& stream) {
  return 12 + (le32_at(stream, stream.size() - 8) + 1) * 4 + 4;
}

// What the kernel's build does with `lz4 -l -9`: the legacy magic, then 8 MiB blocks, each with its
// compressed size in front.
std::vector<uint8_t> lz4_legacy(std::span<const uint8_t> data) {
  constexpr size_t kBlock = 8 << 20;
  std::vector<uint8_t> out = {0x02, 0x21, 0x4C, 0x18};
  std::vector<char> scratch(LZ4_compressBound(kBlock));
  for (size_t at = 0; at < data.size(); at += kBlock) {
    const int len = static_cast<int>(std::min(kBlock, data.size() - at));
    const int written = LZ4_compress_HC(reinterpret_cast<const char*>(data.data() + at), scratch.data(), len,
                                        static_cast<int>(scratch.size()), 9);
    REQUIRE(written > 0);
    append_le32(out, static_cast<uint32_t>(written));
    out.insert(out.end(), scratch.begin(), scratch.begin() + written);
  }
  return out;
}

Result<std::vector<uint8_t>> decode(StreamFormat format, std::span<const uint8_t> payload,
                                    uint64_t max_output = kMaxDecodedBytes) {
  return decode_stream(format, {payload, "vmlinuz"}, max_output);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The first block of a one-frame xz stream: its header and filter chain, as liblzma reads them.
struct XzBlock {
  explicit XzBlock(const std::vector<uint8_t>& stream) : stream(stream) {
    header.check = LZMA_CHECK_CRC32;
    header.filters = filters;
    header.header_size = lzma_block_header_size_decode(stream[12]);  // after the 12-byte stream header
    REQUIRE(lzma_block_header_decode(&header, nullptr, stream.data() + 12) == LZMA_OK);
  }
  ~XzBlock() {
    for (size_t i = 0; filters[i].id != LZMA_VLI_UNKNOWN; ++i) free(filters[i].options);
  }
  // The first LZMA2 chunk must start with control 0xE0 (dictionary reset, new properties,
  // compressed), then its two sizes, then the properties byte, which this returns.
  uint8_t first_chunk_properties() const {
    const uint8_t* chunk = stream.data() + 12 + header.header_size;
    CHECK((chunk[0] & 0xE0) == 0xE0);
    return chunk[5];
  }

  const std::vector<uint8_t>& stream;
  lzma_filter filters[LZMA_FILTERS_MAX + 1];
  lzma_block header{};
};

std::vector<uint8_t> decode_xz(const std::vector<uint8_t>& stream) {
  auto plain = decode(StreamFormat::kXz, stream);
  REQUIRE(plain.ok());
  return *plain;
}

}  // namespace

TEST_CASE("detect_stream_format recognises every magic") {
  auto detect = [](std::vector<uint8_t> bytes) { return detect_stream_format(bytes); };
  CHECK(detect({0x1F, 0x8B, 0x08}) == StreamFormat::kGzip);
  CHECK(detect({0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00}) == StreamFormat::kXz);
  CHECK(detect({0x02, 0x21, 0x4C, 0x18, 0x00}) == StreamFormat::kLz4Legacy);
  CHECK(detect({0x04, 0x22, 0x4D, 0x18, 0x4C}) == StreamFormat::kLz4Frame);
  CHECK(detect({0x28, 0xB5, 0x2F, 0xFD, 0x00}) == StreamFormat::kZstd);
  CHECK(detect({'B', 'Z', 'h', '9'}) == StreamFormat::kBzip2);
  CHECK(detect({0x5D, 0x00, 0x00, 0x80, 0x00}) == StreamFormat::kLzma);
  CHECK(detect({0x89, 0x4C, 0x5A, 0x4F, 0x00}) == StreamFormat::kLzo);
  CHECK(detect({0x7F, 'E', 'L', 'F', 2}) == StreamFormat::kRaw);
  CHECK_FALSE(detect({0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x01}).has_value());
  CHECK_FALSE(detect({0x1F}).has_value());
  CHECK_FALSE(detect({}).has_value());
  CHECK_FALSE(detect({'M', 'Z', 0, 0}).has_value());
}

TEST_CASE("levels") {
  CHECK(default_level(Codec::kGzip) == 9);
  CHECK(default_level(Codec::kLz4) == 12);
  CHECK(default_level(Codec::kZstd) == 19);
  CHECK(default_level(Codec::kRaw) == 0);
  CHECK((min_level(Codec::kGzip) == 1 && max_level(Codec::kGzip) == 9));
  CHECK((min_level(Codec::kLz4) == 1 && max_level(Codec::kLz4) == 12));
  CHECK((min_level(Codec::kZstd) == 1 && max_level(Codec::kZstd) == 22));
  CHECK((min_level(Codec::kRaw) == 0 && max_level(Codec::kRaw) == 0));
  CHECK(default_level(Codec::kXz) == 9);
  CHECK((min_level(Codec::kXz) == 1 && max_level(Codec::kXz) == 9));

  std::vector<uint8_t> out;
  const auto data = sample(100, 1);
  const Status too_high = append_frame(Context{.output = "out.img"}, {Codec::kGzip, 10, 1}, data, out);
  REQUIRE_FALSE(too_high.ok());
  CHECK(too_high.error().message == "out.img: gzip level 10 is out of range 1..9");
  CHECK_FALSE(append_frame(Context{.output = "out.img"}, {Codec::kLz4, 13, 1}, data, out).ok());
  CHECK_FALSE(append_frame(Context{.output = "out.img"}, {Codec::kZstd, -1, 1}, data, out).ok());
  CHECK_FALSE(append_frame(Context{.output = "out.img"}, {Codec::kRaw, 1, 1}, data, out).ok());
  CHECK(out.empty());
}

TEST_CASE("gzip frame is a real gzip member with CRC32 and ISIZE") {
  const auto data = sample(200000, 2);
  const auto out = frame(Codec::kGzip, data, 6);
  REQUIRE(out.size() > 18);
  CHECK(out[0] == 0x1F);
  CHECK(out[1] == 0x8B);
  CHECK(out[2] == 0x08);  // deflate
  CHECK(le32_at(out, out.size() - 8) == crc32(0, data.data(), static_cast<uInt>(data.size())));
  CHECK(le32_at(out, out.size() - 4) == data.size());
  CHECK(out.size() < data.size() / 2);
}

TEST_CASE(
    "lz4 frame header: linked 4 MiB blocks, content size, no content checksum (the frame table's XXH3 proves it)") {
  const auto data = sample(100000, 3);
  for (int level : {1, 3, 9, 12}) {
    CAPTURE(level);
    const auto out = frame(Codec::kLz4, data, level);
    REQUIRE(out.size() > 15);
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0x04, 0x22, 0x4D, 0x18});
    const uint8_t flg = out[4];
    CHECK((flg >> 6) == 1);    // version 01
    CHECK((flg & 0x20) == 0);  // blocks are linked
    CHECK((flg & 0x10) == 0);  // no block checksum
    CHECK((flg & 0x08) != 0);  // content size present
    CHECK((flg & 0x04) == 0);  // no content checksum
    CHECK(flg == 0x48);
    CHECK(out[5] == 0x70);  // BD: 4 MiB maximum block size
    uint64_t content_size = 0;
    for (int i = 0; i < 8; ++i) content_size |= uint64_t{out[6 + i]} << (8 * i);
    CHECK(content_size == data.size());
    // The frame ends with an EndMark (0).
    CHECK(le32_at(out, out.size() - 4) == 0);
  }
}

TEST_CASE("lz4 from level 10 on parses for the decoder (favorDecSpeed), the default level 12") {
  const auto data = sample(200000, 5);
  // LZ4F's own frame of the same bytes, one block like kpack's: the block after the 15-byte header
  // (magic, FLG, BD, content size, header checksum) is the parser's choice.
  auto first_block = [](const std::vector<uint8_t>& out) {
    const uint32_t size = le32_at(out, 15) & 0x7FFFFFFF;
    return std::vector<uint8_t>(out.begin() + 15, out.begin() + 19 + size);
  };
  auto lz4f_block = [&](int level, unsigned favor) {
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.blockSizeID = LZ4F_max4MB;  // LZ4F_compressFrame shrinks it to fit: still one block
    prefs.frameInfo.contentSize = data.size();
    prefs.compressionLevel = level;
    prefs.favorDecSpeed = favor;
    std::vector<uint8_t> out(LZ4F_compressFrameBound(data.size(), &prefs));
    const size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
    REQUIRE_FALSE(LZ4F_isError(n));
    out.resize(n);
    return first_block(out);
  };
  auto kpack_block = [&](int level) {
    const auto out = frame(Codec::kLz4, data, level);
    REQUIRE(out.size() == 15 + 4 + (le32_at(out, 15) & 0x7FFFFFFF) + 4);  // one block, then the EndMark
    return first_block(out);
  };
  for (int level : {10, 12}) {
    CAPTURE(level);
    REQUIRE(lz4f_block(level, 1) != lz4f_block(level, 0));  // the sample is one where the parse differs
    CHECK(kpack_block(level) == lz4f_block(level, 1));
  }
  CHECK(frame(Codec::kLz4, data) == frame(Codec::kLz4, data, 12));
  CHECK(kpack_block(9) == lz4f_block(9, 0));  // below 10 LZ4HC has no such choice
}

TEST_CASE("zstd frame header records content size and no checksum (the frame table's XXH3 proves it)") {
  const auto data = sample(300000, 4);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    const auto out = frame(Codec::kZstd, data, 3, threads);
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0x28, 0xB5, 0x2F, 0xFD});
    const uint8_t descriptor = out[4];
    CHECK((descriptor & 0x04) == 0);  // Content_Checksum_flag
    CHECK((descriptor >> 6) != 0);    // a Frame_Content_Size field wider than "absent or 1 byte"
    CHECK(ZSTD_getFrameContentSize(out.data(), out.size()) == data.size());
    CHECK(ZSTD_findFrameCompressedSize(out.data(), out.size()) == out.size());
  }
  // Small inputs use a single segment, where the content size is always present.
  const auto small = frame(Codec::kZstd, std::span(data).first(100), 19);
  CHECK((small[4] & 0x04) == 0);
  CHECK(ZSTD_getFrameContentSize(small.data(), small.size()) == 100);
}

TEST_CASE("xz frame: one .xz stream, CRC32, one block of LZMA2 behind x86 BCJ for code, the given dictionary") {
  const auto data = sample(300000, 15);
  // The preset's dictionary caps it; small payloads get no more than their largest region.
  CHECK(xz_dictionary_for(9, 1ull << 30) == 64u << 20);
  CHECK(xz_dictionary_for(6, 30u << 20) == 8u << 20);
  CHECK(xz_dictionary_for(9, 300000) == 300000);
  CHECK(xz_dictionary_for(9, 100) == 4096);
  for (bool executable : {false, true}) {
    CAPTURE(executable);
    CompressOptions options{Codec::kXz, 6, 1};
    options.content = executable ? Content::kCode : Content::kBytes;
    options.xz_dictionary = 1 << 20;
    std::vector<uint8_t> out;
    REQUIRE(append_frame(Context{.output = "out.img"}, options, data, out).ok());
    // Stream header: magic, flags 00 01 (CRC32), their CRC32.
    REQUIRE(out.size() > 32);
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 8) ==
          std::vector<uint8_t>{0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00, 0x01});
    CHECK(le32_at(out, 8) == lzma_crc32(out.data() + 6, 2, 0));
    // Stream footer: the same flags, then "YZ".
    CHECK(std::vector<uint8_t>(out.end() - 4, out.end()) == std::vector<uint8_t>{0x00, 0x01, 0x59, 0x5A});
    // Block header: both sizes recorded, then the filter chain.
    XzBlock block(out);
    CHECK(block.header.uncompressed_size == data.size());
    CHECK(block.header.compressed_size != LZMA_VLI_UNKNOWN);
    size_t lzma2 = executable ? 1 : 0;
    if (executable) CHECK(block.filters[0].id == LZMA_FILTER_X86);
    REQUIRE(block.filters[lzma2].id == LZMA_FILTER_LZMA2);
    CHECK(static_cast<lzma_options_lzma*>(block.filters[lzma2].options)->dict_size == 1u << 20);
    CHECK(block.filters[lzma2 + 1].id == LZMA_VLI_UNKNOWN);
    // The properties byte (pb * 5 + lp) * 9 + lc: lc=4 lp=0 pb=2.
    CHECK(block.first_chunk_properties() == (2 * 5 + 0) * 9 + 4);
    CHECK(decode_xz(out) == data);
  }
}

TEST_CASE("xz frame of the coded relocation table: LZMA2 alone, with no literal or position bits") {
  const auto data = sample(100000, 16);
  CompressOptions options{Codec::kXz, 9, 1};
  options.content = Content::kTable;
  std::vector<uint8_t> out;
  REQUIRE(append_frame(Context{.output = "out.img"}, options, data, out).ok());
  XzBlock block(out);
  REQUIRE(block.filters[0].id == LZMA_FILTER_LZMA2);
  // The region's size as dictionary, which the header rounds up to a power of two.
  CHECK(static_cast<lzma_options_lzma*>(block.filters[0].options)->dict_size == 1u << 17);
  CHECK(block.filters[1].id == LZMA_VLI_UNKNOWN);
  CHECK(block.first_chunk_properties() == 0);  // lc=0 lp=0 pb=0
  CHECK(decode_xz(out) == data);
}

TEST_CASE("raw frames are the bytes themselves") {
  const auto data = sample(1000, 5);
  std::vector<uint8_t> out = {1, 2};
  REQUIRE(append_frame(Context{.output = "out.img"}, {Codec::kRaw, 0, 1}, data, out).ok());
  CHECK(out.size() == 1002);
  CHECK(std::equal(data.begin(), data.end(), out.begin() + 2));
}

TEST_CASE("round trips over concatenated frames with a trailing size") {
  const auto a = sample(150000, 6), b = sample(1, 7), c = sample(70000, 8);
  const std::vector<uint8_t> empty;
  const auto whole = concat({a, b, empty, c});
  const struct {
    Codec codec;
    StreamFormat format;
  } cases[] = {{Codec::kGzip, StreamFormat::kGzip},
               {Codec::kLz4, StreamFormat::kLz4Frame},
               {Codec::kZstd, StreamFormat::kZstd},
               {Codec::kXz, StreamFormat::kXz}};
  for (const auto& test : cases) {
    CAPTURE(codec_name(test.codec));
    const auto payload = concat({frame(test.codec, a), frame(test.codec, b, 1), frame(test.codec, empty),
                                 frame(test.codec, c, max_level(test.codec))});
    CHECK(detect_stream_format(payload) == test.format);
    auto plain = decode(test.format, payload);
    REQUIRE_MESSAGE(plain.ok(), (plain.ok() ? "" : plain.error().message));
    CHECK(*plain == whole);

    auto with_size = payload;
    append_le32(with_size, static_cast<uint32_t>(whole.size()));
    auto sized = decode(test.format, with_size);
    REQUIRE_MESSAGE(sized.ok(), (sized.ok() ? "" : sized.error().message));
    CHECK(*sized == whole);
  }
  auto raw = decode(StreamFormat::kRaw, whole);
  REQUIRE(raw.ok());
  CHECK(*raw == whole);
}

TEST_CASE("xz: concatenated streams, trailing size ignored") {
  const auto a = sample(120000, 9), b = sample(5000, 10);
  auto payload = concat({xz_stream(a), xz_stream(b)});
  append_le32(payload, static_cast<uint32_t>(a.size() + b.size()));
  auto plain = decode(StreamFormat::kXz, payload);
  REQUIRE_MESSAGE(plain.ok(), (plain.ok() ? "" : plain.error().message));
  CHECK(*plain == concat({a, b}));
}

TEST_CASE("lz4 legacy: 8 MiB blocks, repeated magic, trailing size") {
  const auto data = sample((8 << 20) + 123456, 11);
  auto payload = lz4_legacy(data);
  append_le32(payload, static_cast<uint32_t>(data.size()));
  auto plain = decode(StreamFormat::kLz4Legacy, payload);
  REQUIRE_MESSAGE(plain.ok(), (plain.ok() ? "" : plain.error().message));
  CHECK(*plain == data);

  // Two archives back to back (the kernel skips a repeated magic), then the size.
  const auto tail = sample(1000, 12);
  auto two = concat({lz4_legacy(data), lz4_legacy(tail)});
  append_le32(two, static_cast<uint32_t>(data.size() + tail.size()));
  auto both = decode(StreamFormat::kLz4Legacy, two);
  REQUIRE_MESSAGE(both.ok(), (both.ok() ? "" : both.error().message));
  CHECK(*both == concat({data, tail}));

  // Without the trailing size too.
  auto bare = decode(StreamFormat::kLz4Legacy, lz4_legacy(tail));
  REQUIRE(bare.ok());
  CHECK(*bare == tail);
}

TEST_CASE("lz4 legacy damage") {
  const auto data = sample(50000, 13);
  const auto good = lz4_legacy(data);

  auto truncated = good;
  truncated.resize(truncated.size() - 100);
  auto t = decode(StreamFormat::kLz4Legacy, truncated);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message == "vmlinuz: truncated lz4-legacy payload");

  auto huge_block = good;
  huge_block[4] = 0xFF, huge_block[5] = 0xFF, huge_block[6] = 0xFF, huge_block[7] = 0x7F;
  auto h = decode(StreamFormat::kLz4Legacy, huge_block);
  REQUIRE_FALSE(h.ok());
  CHECK(contains(h.error().message, "vmlinuz: corrupt lz4-legacy payload: block of"));

  // A short block followed by another block cannot come from the kernel's compressor.
  auto after_short = good;
  const auto extra = lz4_legacy(data);
  after_short.insert(after_short.end(), extra.begin() + 4, extra.end());
  auto s = decode(StreamFormat::kLz4Legacy, after_short);
  REQUIRE_FALSE(s.ok());
  CHECK(contains(s.error().message, "corrupt lz4-legacy payload: data after the last block"));

  auto broken = good;
  for (size_t i = 8; i < 40; ++i) broken[i] = 0xFF;
  auto b = decode(StreamFormat::kLz4Legacy, broken);
  REQUIRE_FALSE(b.ok());
  CHECK(contains(b.error().message, "vmlinuz: corrupt lz4-legacy payload"));
}

TEST_CASE("corrupt, truncated and oversized payloads are errors naming the file") {
  const auto data = sample(200000, 14);
  const struct {
    StreamFormat format;
    std::vector<uint8_t> payload;
    size_t checksum_at;            // where the content checksum sits, from the end of the frame
    const char* checksum_problem;  // what the library says when it does not match
  } cases[] = {
      {StreamFormat::kGzip, frame(Codec::kGzip, data), 8, "incorrect data check"},
      {StreamFormat::kLz4Frame, test::checked_lz4(data), 4, "ERROR_contentChecksum_invalid"},
      {StreamFormat::kZstd, test::checked_zstd(data), 4, "Restored data doesn't match checksum"},
      {StreamFormat::kXz, xz_stream(data), 0, ""},
      {StreamFormat::kXz, frame(Codec::kXz, data), xz_check_from_end(frame(Codec::kXz, data)),
       "compressed data is corrupt"},
  };
  for (const auto& test : cases) {
    const std::string name = stream_format_name(test.format);
    CAPTURE(name);
    auto ok = decode(test.format, test.payload);
    REQUIRE(ok.ok());
    CHECK(*ok == data);

    auto flipped = test.payload;
    flipped[flipped.size() / 2] ^= 0x55;
    auto f = decode(test.format, flipped);
    REQUIRE_FALSE(f.ok());
    CHECK(contains(f.error().message, "vmlinuz: corrupt " + name + " payload"));

    if (test.checksum_at != 0) {
      auto bad_sum = test.payload;
      bad_sum[bad_sum.size() - test.checksum_at] ^= 0x01;
      auto c = decode(test.format, bad_sum);
      REQUIRE_FALSE(c.ok());
      CHECK(c.error().message == "vmlinuz: corrupt " + name + " payload: " + test.checksum_problem);
    }

    for (size_t cut : {size_t{1}, size_t{10}, test.payload.size() / 2, test.payload.size() - 3}) {
      CAPTURE(cut);
      auto t = decode(test.format, std::span(test.payload).first(test.payload.size() - cut));
      REQUIRE_FALSE(t.ok());
      CHECK(contains(t.error().message, "vmlinuz: "));
      CHECK((contains(t.error().message, "truncated") || contains(t.error().message, "corrupt")));
    }
    auto tiny = decode(test.format, std::span(test.payload).first(2));
    REQUIRE_FALSE(tiny.ok());

    // The limit holds: exactly at it is fine, one byte less is refused.
    CHECK(decode(test.format, test.payload, data.size()).ok());
    auto bomb = decode(test.format, test.payload, data.size() - 1);
    REQUIRE_FALSE(bomb.ok());
    CHECK(bomb.error().message == "vmlinuz: " + name + " payload decodes to more than " +
                                      std::to_string(data.size() - 1) + " bytes, refusing it");
  }
}

TEST_CASE("decompression bombs stop at the limit") {
  const std::vector<uint8_t> zeros(64 << 20, 0);
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    CAPTURE(codec_name(codec));
    const auto payload = frame(codec, zeros, 1);
    CHECK(payload.size() < 1 << 20);
    const StreamFormat format = *detect_stream_format(payload);
    auto bomb = decode(format, payload, 1 << 20);
    REQUIRE_FALSE(bomb.ok());
    CHECK(contains(bomb.error().message, "decodes to more than 1 MiB"));
  }
  auto legacy = lz4_legacy(zeros);
  auto bomb = decode(StreamFormat::kLz4Legacy, legacy, 1 << 20);
  REQUIRE_FALSE(bomb.ok());
  CHECK(contains(bomb.error().message, "decodes to more than 1 MiB"));
  CHECK(kMaxDecodedBytes == uint64_t{1} << 30);
}

TEST_CASE("formats kpack does not read") {
  const std::vector<uint8_t> bzip2 = {'B', 'Z', 'h', '9', 0x31, 0x41};
  auto b = decode(StreamFormat::kBzip2, bzip2);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message == "vmlinuz: payload is compressed with bzip2, which kpack does not read");
  auto l = decode(StreamFormat::kLzma, std::vector<uint8_t>{0x5D, 0, 0});
  REQUIRE_FALSE(l.ok());
  CHECK(l.error().message == "vmlinuz: payload is compressed with lzma, which kpack does not read");
  auto o = decode(StreamFormat::kLzo, std::vector<uint8_t>{0x89, 0x4C, 0x5A, 0x4F});
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().message == "vmlinuz: payload is compressed with lzo, which kpack does not read");
}

TEST_CASE("a payload that does not start with its format's magic") {
  const std::vector<uint8_t> junk = {1, 2, 3, 4, 5, 6, 7, 8};
  for (StreamFormat format : {StreamFormat::kGzip, StreamFormat::kXz, StreamFormat::kLz4Legacy, StreamFormat::kLz4Frame,
                              StreamFormat::kZstd}) {
    auto r = decode(format, junk);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == std::string("vmlinuz: corrupt ") + stream_format_name(format) + " payload: bad magic");
  }
  auto empty = decode(StreamFormat::kZstd, {});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "vmlinuz: truncated zstd payload");
}

// packer/image/frames.cc, append_frames: std::bad_alloc on a compression worker escaped the thread and
// called std::terminate (SIGABRT) instead of the one-line error the main thread gives.
TEST_CASE("regression: running out of memory on a compression worker is an error") {
  std::vector<uint8_t> a(100, 1), b(100, 2), c(100, 3);
  FramedPayload out;
  std::vector<FramePiece> pieces{{a}, {b}, {c}};
  FrameWriter failing = [](const Context&, const CompressOptions&, std::span<const uint8_t> piece,
                           std::vector<uint8_t>& frame) -> Status {
    if (piece[0] == 2) throw std::bad_alloc();
    frame.assign(piece.begin(), piece.end());
    return Ok{};
  };
  Status status = append_frames(Context{.output = "out.img"}, {Codec::kLz4, 1, 3}, pieces, out, nullptr, failing);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "out.img: out of memory while compressing");
}
