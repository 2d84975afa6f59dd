// The unpack engine on the host: payloads built by the packer, unpacked into simulated physical
// memory that checks every write.
#include <doctest/doctest.h>

#include <lzma.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>

#include "formats/call_targets.h"
#include "formats/elf64.h"
#include "packer/input/bzimage_reader.h"
#include "packer/input/default_codec.h"
#include "packer/codecs/codecs.h"
#include "stub/unpack/frame_decoder.h"
#include "stub/unpack/frame_table.h"
#include "packer/image/frames.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "packer/input/kernel_version.h"
#include "packer/image/layout.h"
#include "tests/support/real_kernel.h"
#include "tests/support/simulated_memory.h"
#include "tests/support/same_segment.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/thread_workers.h"
#include "stub/unpack/unpack.h"
#include "stub/unpack/xxh3.h"

using namespace kpack;
using kpack::test::SimulatedMemory;

namespace {

constexpr uint64_t kRamSize = 128ull << 20;
constexpr uint64_t kImageBase = 0x100000;
constexpr uint64_t kStubSize = 0x20000;  // stands for the stub's code before the payload

class CountingTrace final : public UnpackTrace {
 public:
  void phase(const char*, uint64_t) override { ++phases; }
  int phases = 0;
};

KernelInput input_from(std::vector<uint8_t> elf) {
  Result<KernelInput> input = kernel_input_from_elf(std::move(elf), "test");
  REQUIRE(input.ok());
  return *input;
}

CompressOptions test_options(Codec codec) {
  CompressOptions options{codec, default_level(codec) > 6 ? 3 : default_level(codec), 1};
  if (codec == Codec::kGzip) options.level = 6;
  return options;
}

// Small chunks, so the synthetic kernel's segments are cut into several independent frames.
constexpr uint64_t kTestChunk = 0x8000;

FramedPayload compressed_payload(const KernelInput& input, Codec codec, uint64_t chunk = kTestChunk) {
  FramedPayload payload;
  CompressOptions options = test_options(codec);
  options.chunk_size = chunk;
  REQUIRE(append_elf_frames(Context{.output = "test"}, options, layout_compact(input), {}, payload, nullptr).ok());
  return payload;
}

// A raw payload: the bytes alone, no frame table.
FramedPayload raw_payload(std::vector<uint8_t> bytes) { return FramedPayload{std::move(bytes), {}}; }

// Where the placeholder stub holds the frame table, as a real image does between its record and
// the payload.
constexpr uint64_t kFrameTableOffset = 0x100;

struct Run {
  std::unique_ptr<SimulatedMemory> memory;
  std::vector<uint8_t> image;  // what was loaded at image_base
  uint64_t image_base = 0;
  StubStatus status;
  UnpackResult result;
  std::vector<test::ThreadWorkers::Prepared> prepared;  // the workers' before_decoding calls
};

// Loads stub placeholder (with the frame table) + payload at `image_base` and unpacks it with RAM
// [1 MiB, 128 MiB), of which [1 MiB, free_end) is free.
Run unpack(Codec codec, const FramedPayload& framed, uint64_t image_base = kImageBase, uint64_t min_kernel = 0x200000,
           uint32_t threads = 0, uint32_t held = 0, bool first_helper_alone = false, uint64_t free_end = kRamSize,
           Range cleared_by_kernel = {}) {
  const std::vector<uint8_t>& payload = framed.bytes;
  Run run;
  run.memory = std::make_unique<SimulatedMemory>(0, kRamSize);
  run.image.assign(kStubSize, 0xCC);
  run.image_base = image_base;
  REQUIRE(kFrameTableOffset + framed.frames.size() * sizeof(FrameEntry) <= kStubSize);
  if (!framed.frames.empty())
    std::memcpy(run.image.data() + kFrameTableOffset, framed.frames.data(), framed.frames.size() * sizeof(FrameEntry));
  run.image.insert(run.image.end(), payload.begin(), payload.end());
  run.memory->load(image_base, run.image);
  Range image = range_of(image_base, run.image.size());
  if (codec != Codec::kRaw)
    run.memory->protect(image);
  else
    run.memory->protect(range_of(image_base, kStubSize));
  FreeMemory free;
  REQUIRE(free.add({0x100000, free_end}).ok());
  UnpackRequest request{codec, image_base + kStubSize, payload.size(), image, min_kernel};
  request.frame_table_addr = image_base + kFrameTableOffset;
  request.frame_count = static_cast<uint32_t>(framed.frames.size());
  request.digest = digest_for(codec);
  request.cleared_by_kernel = cleared_by_kernel;
  test::ThreadWorkers workers(held, first_helper_alone);
  if (threads) request.workers = &workers, request.max_workers = threads;
  CountingTrace trace;
  run.status = unpack_kernel(request, free, *run.memory, trace, &run.result);
  run.prepared = workers.prepared();
  return run;
}

// Every segment byte-identical at its destination, bss zeroed but for `left` (offsets from the
// kernel's lowest address), which holds what memory held before, nothing written elsewhere.
void check_kernel(Run& run, const KernelInput& input, Range left = {}) {
  REQUIRE_MESSAGE(run.status.ok(), (run.status.message ? run.status.message : ""));
  CHECK(run.memory->violations().empty());
  CHECK(run.memory->stray_writes({run.image}).empty());
  const KernelHeaders& k = input.kernel;
  CHECK(run.result.base % k.alignment == 0);
  CHECK(run.result.entry == run.result.base + (k.entry - k.physical.begin));
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t dst = run.result.base + (s.paddr - k.physical.begin);
    std::vector<uint8_t> expected(input.elf.begin() + s.offset, input.elf.begin() + s.offset + s.filesz);
    expected.resize(s.memsz, 0);
    for (uint64_t at = s.filesz; at < s.memsz; ++at) {
      uint64_t offset = s.paddr - k.physical.begin + at, addr = run.result.base + offset;
      bool loaded = addr >= run.image_base && addr - run.image_base < run.image.size();
      if (offset >= left.begin && offset < left.end)
        expected[at] = loaded ? run.image[addr - run.image_base] : SimulatedMemory::kCanary;
    }
    CHECK_MESSAGE(run.memory->copy(dst, s.memsz) == expected, "segment " << i);
  }
  // Only the kernel's own range and the work area were asked for.
  Range kernel = range_of(run.result.base, k.span());
  for (Range g : run.memory->granted()) CHECK((kernel.contains(g) || run.result.work.contains(g)));
}

}  // namespace

TEST_CASE("every codec unpacks a kernel straight to its destination") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    Run run = unpack(codec, compressed_payload(input, codec));
    check_kernel(run, input);
    CHECK(run.result.moved == 0);
    CHECK(run.result.decoded == 0x23000 + 0x9000 + 0x2000 + 0x6000);
    // Compressed kernels go to the lowest aligned address above the image.
    CHECK(run.result.base == align_up(kImageBase + run.image.size(), 0x200000));
    CHECK_FALSE(run.result.work.overlaps(range_of(run.result.base, input.kernel.span())));
  }
}

TEST_CASE("trailing zeros of a segment travel as bss and are zeroed by the engine") {
  std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
  KernelInput original = input_from(elf);
  const LoadSegment& text = original.kernel.segments[0];
  std::fill(elf.begin() + text.offset + text.filesz - 0x5000, elf.begin() + text.offset + text.filesz, 0);
  KernelInput input = input_from(elf);
  PayloadElf compact = layout_compact(input);
  CHECK(compact.kernel.segments[0].filesz <= text.filesz - 0x5000);
  CHECK(compact.kernel.segments[0].memsz == text.memsz);
  Run run = unpack(Codec::kLz4, compressed_payload(input, Codec::kLz4));
  check_kernel(run, input);
  CHECK(run.result.decoded <= 0x23000 + 0x9000 + 0x2000 + 0x6000 - 0x5000);
}

TEST_CASE("the kernel never goes below the requested minimum address") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  Run run = unpack(Codec::kLz4, compressed_payload(input, Codec::kLz4), kImageBase, 0x1000000);
  check_kernel(run, input);
  CHECK(run.result.base == 0x1000000);
}

TEST_CASE("a raw payload at its intended address is used in place, elsewhere moved once") {
  // The last segment's file bytes end in 0x1000 zeros, then its 0x3000 of bss: the file leaves out both.
  std::vector<uint8_t> bytes = test::make_kernel_elf(test::typical_segments());
  const LoadSegment last = input_from(bytes).kernel.segments[3];
  std::fill(bytes.begin() + last.offset + 0x5000, bytes.begin() + last.offset + 0x6000, 0);
  bytes[last.offset + 0x4FFF] = 0x5A;
  KernelInput input = input_from(bytes);
  // The first segment sits 1 MiB past the image base: at 2 MiB when loaded at 1 MiB.
  PayloadElf elf = layout_mirrored(input, 0x100000 - kStubSize);
  CHECK(elf.bytes.size() == 0x100000 - kStubSize + 0x20B000 + 0x5000);
  Run in_place = unpack(Codec::kRaw, raw_payload(elf.bytes));
  check_kernel(in_place, input);
  CHECK(in_place.result.in_place);
  CHECK(in_place.result.base == 0x200000);
  CHECK(in_place.result.moved == 0);

  // Loaded 16 MiB up (as kexec_file_load would), the segments are 2 MiB-misaligned: each one's file
  // bytes move once (not the gap between the first two); the rest is zeroed at the new place.
  Run moved = unpack(Codec::kRaw, raw_payload(elf.bytes), 0x1000000);
  check_kernel(moved, input);
  CHECK_FALSE(moved.result.in_place);
  CHECK(moved.result.moved == 0x23000 + 0x9000 + 0x2000 + 0x5000);
  CHECK(moved.result.base % 0x200000 == 0);
}

TEST_CASE("a compact raw payload loaded low moves up to the floor, the highest segment first, over its own file") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  PayloadElf elf = layout_compact(input);
  REQUIRE(is_physically_ordered(elf.kernel));
  // At 1 MiB the segments lie from 1 MiB + kStubSize + 0x1000 on; the kernel goes to its 16 MiB
  // floor, above them: each segment's bytes move once, without one overwriting another unmoved.
  Run run = unpack(Codec::kRaw, raw_payload(elf.bytes), kImageBase, 0x1000000);
  check_kernel(run, input);
  CHECK_FALSE(run.result.in_place);
  CHECK(run.result.base == 0x1000000);
  CHECK(run.result.moved == 0x23000 + 0x9000 + 0x2000 + 0x6000);
}

TEST_CASE("a raw kernel's bss past the file's end stays clear of the work area, so it still runs in place") {
  std::vector<test::SegmentSpec> segments = test::typical_segments();
  segments[3].memsz += 0x100000;  // 1 MiB more bss: room for the work area, were it allowed there
  KernelInput input = input_from(test::make_kernel_elf(segments));
  // Loaded at 3 MiB, the kernel runs at 4 MiB, through 0x714000; the file ends at 0x611000 and free
  // memory with the kernel's span. Only below the image is there room for the work area.
  PayloadElf elf = layout_mirrored(input, 0x100000 - kStubSize);
  Run run = unpack(Codec::kRaw, raw_payload(elf.bytes), 0x300000, 0x200000, 0, 0, false, 0x714000);
  check_kernel(run, input);
  CHECK(run.result.in_place);
  CHECK(run.result.base == 0x400000);
  CHECK(run.result.work.begin == 0x300000 - kScratchSize - kArenaSize);
  CHECK(run.result.work.end == 0x300000);
}

TEST_CASE("a corrupted frame stops the engine with a checksum or data error") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    for (uint64_t at : {payload.bytes.size() / 2, payload.bytes.size() - 3, uint64_t{20}}) {
      FramedPayload bad = payload;
      bad.bytes[at] ^= 0x40;
      Run run = unpack(codec, bad);
      CHECK_FALSE(run.status.ok());
      CHECK(run.memory->violations().empty());
      CHECK(run.memory->stray_writes({run.image}).empty());
    }
    FramedPayload truncated = payload;
    truncated.bytes.resize(truncated.bytes.size() - 100);
    CHECK_FALSE(unpack(codec, truncated).status.ok());
  }
}

TEST_CASE("xz: the work area holds the dictionary the first stream's headers ask for") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  FramedPayload payload = compressed_payload(input, Codec::kXz, 0);
  // The largest region, 0x23000 bytes of text, sets every stream's dictionary (the header rounds
  // it up to 3 * 2^16); liblzma's own estimate for that dictionary sizes the work area.
  CHECK(xz_dictionary_for(3, 0x23000) == 0x23000);
  lzma_options_lzma lzma{};
  lzma.dict_size = 0x30000;
  lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &lzma}, {LZMA_VLI_UNKNOWN, nullptr}};
  uint64_t state = lzma_raw_decoder_memusage(filters);
  CHECK(state > 0x30000);
  uint64_t bytes = 0;
  REQUIRE(codec_state_size(Codec::kXz, payload.bytes.data(), payload.bytes.size(), &bytes).ok());
  CHECK(bytes == state);
  Run run = unpack(Codec::kXz, payload);
  check_kernel(run, input);
  CHECK(run.result.work.size() == kWorkSize + kFrameQueueRoom + 4096 + align_up(state, 4096));  // a page of order
  CHECK(codec_state_size(Codec::kZstd, payload.bytes.data(), payload.bytes.size(), &bytes).ok());
  CHECK(bytes == 0);

  // A later stream with a larger dictionary than the first promised is refused before it writes.
  FramedPayload uneven;
  PayloadElf elf = layout_compact(input);
  std::vector<FramePiece> pieces;
  for (Range r : elf.regions)
    pieces.push_back({std::span(elf.bytes).subspan(r.begin, r.size()), Content::kBytes, r.begin});
  // The first frame (the headers) asks for a 4 KiB dictionary, every later one for 64 MiB.
  const uint8_t* headers = elf.bytes.data();
  FrameWriter growing = [headers](const Context& ctx, const CompressOptions& options, std::span<const uint8_t> piece,
                                  std::vector<uint8_t>& out) {
    CompressOptions o = options;
    o.xz_dictionary = piece.data() == headers ? 4096 : 64 << 20;
    return append_frame(ctx, o, piece, out);
  };
  REQUIRE(append_frames(Context{.output = "test"}, {Codec::kXz, 3, 1}, pieces, uneven, nullptr, growing).ok());
  Run refused = unpack(Codec::kXz, uneven);
  REQUIRE_FALSE(refused.status.ok());
  CHECK(std::string(refused.status.message) == "xz stream needs more memory than the first one's headers said");
  CHECK(refused.memory->stray_writes({refused.image}).empty());

  // No check to verify: refused as well.
  FramedPayload unchecked;
  unchecked.bytes.resize(lzma_stream_buffer_bound(elf.regions[0].size()));
  size_t pos = 0;
  REQUIRE(lzma_easy_buffer_encode(1, LZMA_CHECK_NONE, nullptr, elf.bytes.data(), elf.regions[0].size(),
                                  unchecked.bytes.data(), &pos, unchecked.bytes.size()) == LZMA_OK);
  unchecked.bytes.resize(pos);
  unchecked.frames.push_back(FrameEntry{});
  unchecked.frames[0].payload_size = pos;
  unchecked.frames[0].size = elf.regions[0].size();
  Run no_check = unpack(Codec::kXz, unchecked);
  REQUIRE_FALSE(no_check.status.ok());
  CHECK(std::string(no_check.status.message) == "xz stream has no check");
}

TEST_CASE("xz: a read-only segment that starts with code is two frames, decoded into place one after the other") {
  std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
  // Section headers: .text and a second code section after 0x20 bytes of padding at the start of
  // the R-X segment (file offset 0x1000), then read-only data; code in the RWX segment (0x37000)
  // does not count, nor does code that does not start a segment.
  auto section = [](uint64_t offset, uint64_t size, uint64_t flags) {
    elf::Shdr sh{};
    sh.type = 1;  // PROGBITS
    sh.offset = offset, sh.size = size, sh.flags = flags;
    return sh;
  };
  const uint64_t ax = elf::kShfAlloc | elf::kShfExecInstr;
  std::vector<elf::Shdr> sections = {elf::Shdr{},
                                     section(0x1000, 0x10000, ax),
                                     section(0x11020, 0x3000, ax),
                                     section(0x14020, 0x5000, elf::kShfAlloc),
                                     section(0x1A000, 0x100, ax),
                                     section(0x37000, 0x1000, ax)};
  test::append_section_headers(elf, sections);
  KernelInput input = input_from(elf);

  PayloadElf compact = layout_compact(input);
  const LoadSegment& text = compact.kernel.segments[0];
  REQUIRE(compact.code.size() == 1);
  CHECK(compact.code[0].begin == text.offset);
  CHECK(compact.code[0].size() == 0x13020);
  size_t split = 0;
  for (size_t i = 0; i + 1 < compact.regions.size(); ++i)
    if (compact.regions[i].begin == text.offset) split = i;
  CHECK(compact.regions[split].end == text.offset + 0x13020);
  CHECK(compact.regions[split + 1].begin == text.offset + 0x13020);
  CHECK(compact.regions[split + 1].end == text.offset + text.filesz);

  Run run = unpack(Codec::kXz, compressed_payload(input, Codec::kXz, 0));
  check_kernel(run, input);
  CHECK(run.result.decoded == 0x23000 + 0x9000 + 0x2000 + 0x6000);

  // Without section headers the whole read-only executable segment is code, the RWX one is not.
  PayloadElf plain = layout_compact(input_from(test::make_kernel_elf(test::typical_segments())));
  REQUIRE(plain.code.size() == 1);
  CHECK(plain.code[0].begin == plain.kernel.segments[0].offset);
  CHECK(plain.code[0].size() == plain.kernel.segments[0].filesz);
}

TEST_CASE("frames are independent: cut into chunks, each decoded straight to its place and proved by its digest") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    // typical_segments: 0x23000 + 0x9000 + 0x2000 + 0x6000 bytes in 0x8000 chunks, after the headers.
    CHECK(payload.frames.size() == 1 + 5 + 2 + 1 + 1);
    for (size_t i = 1; i < payload.frames.size(); ++i) CHECK(payload.frames[i].size <= kTestChunk);
    Run run = unpack(codec, payload);
    check_kernel(run, input);
    CHECK(run.result.frames == payload.frames.size() - 1);
    if (digest_for(codec) != FrameDigest::kXxh3) continue;
    // A digest that does not match what a frame decodes to stops the engine before the kernel runs.
    FramedPayload wrong = payload;
    wrong.frames[3].digest = wrong.frames[3].digest + 1;
    Run refused = unpack(codec, wrong);
    REQUIRE_FALSE(refused.status.ok());
    CHECK(std::string(refused.status.message) == "payload frame digest mismatch (corrupt payload)");
    CHECK(refused.status.a == 3);
  }
}

// Every frame of `payload` decoded on its own by decode_frame (what the engine runs per frame),
// once per position with that one byte of the frame flipped. Returns the positions whose flip was
// not refused; each of those must still decode to exactly the original bytes.
std::vector<uint64_t> flips_let_through(Codec codec, const FramedPayload& payload, const PayloadElf& elf) {
  // The decoder under test and the one that checks a let-through flip each have their own memory:
  // the first keeps its state across positions.
  std::vector<uint8_t> arena_bytes(kArenaSize + (8 << 20)), check_bytes(kArenaSize + (8 << 20));
  std::vector<uint8_t> packed = payload.bytes, decoded;
  std::vector<uint64_t> passed;
  // Guard bytes on both sides of the frame's place: a damaged frame may write inside it, never past it.
  constexpr uint64_t kGuard = 4096;
  for (uint32_t i = 0; i < payload.frames.size(); ++i) {
    const FrameEntry& f = payload.frames[i];
    // One decoder for every position, as one CPU's decoder takes frame after frame in the stub.
    Arena arena(arena_bytes.data(), arena_bytes.size());
    FrameDecoder decoder;
    REQUIRE(decoder.init(codec, arena, digest_for(codec) != FrameDigest::kXxh3).ok());
    for (uint64_t at = f.payload_offset; at < f.payload_offset + f.payload_size; ++at) {
      decoded.assign(kGuard + f.size + kGuard, 0xAA);
      packed[at] ^= 0xFF;
      StubStatus status = decode_frame(decoder, packed.data(), f, i, digest_for(codec), decoded.data() + kGuard);
      packed[at] ^= 0xFF;
      auto untouched = [](auto begin, auto end) {
        return std::all_of(begin, end, [](uint8_t b) { return b == 0xAA; });
      };
      CHECK(untouched(decoded.begin(), decoded.begin() + kGuard));
      CHECK(untouched(decoded.end() - kGuard, decoded.end()));
      if (!status.ok() && digest_for(codec) == FrameDigest::kXxh3) {
        // Whatever the decoder made of the damage, the digest is what is reported.
        CHECK(std::string(status.message) == "payload frame digest mismatch (corrupt payload)");
        CHECK(status.a == i);
      }
      if (status.ok()) {
        passed.push_back(at - f.payload_offset);
        Arena again_arena(check_bytes.data(), check_bytes.size());
        FrameDecoder again;
        REQUIRE(again.init(codec, again_arena).ok());
        std::vector<uint8_t> clean(f.size);
        REQUIRE(decode_frame(again, packed.data(), f, i, FrameDigest::kFrameCheck, clean.data()).ok());
        CHECK(std::equal(clean.begin(), clean.end(), decoded.begin() + kGuard));
        CHECK(std::equal(clean.begin(), clean.end(), elf.bytes.begin() + f.file_offset));
      }
    }
  }
  return passed;
}

// typical_segments() with a call or a jump every 13 bytes of its code, to one of 8 functions in it
// (formats/call_targets.h): what the coding of call targets finds in a real kernel's text.
std::vector<uint8_t> kernel_with_calls() {
  std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
  const uint64_t code = 0x1000, code_size = test::typical_segments()[0].filesz;  // the first segment
  for (uint64_t at = code + 64; at + kCallInstructionSize <= code + code_size; at += 13) {
    uint64_t target = code + (at * 7919 % 8) * (code_size / 8);
    elf[at] = at % 3 ? 0xE8 : 0xE9;
    store_le<uint32_t>(elf.data() + at + 1, static_cast<uint32_t>(target - (at + kCallInstructionSize)));
  }
  return elf;
}

TEST_CASE("every frame decodes on its own, in any order, its call targets decoded in place") {
  KernelInput input = input_from(kernel_with_calls());
  PayloadElf elf = layout_compact(input);
  std::vector<uint8_t> arena_bytes(kArenaSize + (8 << 20));
  for (Codec codec : {Codec::kLz4, Codec::kGzip, Codec::kZstd, Codec::kXz}) {
    std::string name = codec_name(codec);
    CAPTURE(name);
    FramedPayload payload = compressed_payload(input, codec);
    std::vector<uint32_t> order(payload.frames.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(45));
    Arena arena(arena_bytes.data(), arena_bytes.size());
    FrameDecoder decoder;  // one decoder takes the frames in turn, as one CPU's does in the stub
    REQUIRE(decoder.init(codec, arena, digest_for(codec) != FrameDigest::kXxh3).ok());
    std::vector<uint8_t> out(elf.bytes.size(), 0xAA);
    uint32_t coded_frames = 0;
    for (uint32_t i : order) {
      const FrameEntry& f = payload.frames[i];
      StubStatus status =
          decode_frame(decoder, payload.bytes.data(), f, i, digest_for(codec), out.data() + f.file_offset);
      std::string why = status.ok() ? "" : status.message;
      CAPTURE(why);
      REQUIRE(status.ok());
      if (f.coding != static_cast<uint64_t>(FrameCoding::kCallTargets)) continue;
      // The frame holds the code coded: decoded without undoing it, the bytes are the coder's.
      ++coded_frames;
      FrameEntry as_stored = f;
      as_stored.coding = static_cast<uint64_t>(FrameCoding::kNone);
      std::vector<uint8_t> stored(f.size),
          want(elf.bytes.begin() + f.file_offset, elf.bytes.begin() + f.file_offset + f.size);
      REQUIRE(decode_frame(decoder, payload.bytes.data(), as_stored, i, digest_for(codec), stored.data()).ok());
      code_call_targets(want.data(), want.size(), f.file_offset);
      CHECK(stored == want);
      CHECK(!std::equal(stored.begin(), stored.end(), elf.bytes.begin() + f.file_offset));
    }
    CHECK(out == elf.bytes);
    // Code is 0x23000 bytes in frames of kTestChunk: 5 of them, coded in zstd and gzip images.
    bool coding = codec == Codec::kZstd || codec == Codec::kGzip;
    CHECK(coded_frames == (coding ? 5u : 0u));
    CHECK(codes_call_targets(codec) == coding);
  }
}

TEST_CASE("lz4 and zstd digests cover each frame's compressed bytes, exactly") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  for (Codec codec : {Codec::kLz4, Codec::kZstd}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    PayloadElf elf = layout_compact(input);
    for (const FrameEntry& f : payload.frames) {
      CHECK(f.digest == xxh3_64(payload.bytes.data() + f.payload_offset, f.payload_size));
      CHECK(f.digest != xxh3_64(elf.bytes.data() + f.file_offset, f.size));
    }
  }
}

TEST_CASE("a flipped byte anywhere in any frame is refused, for every codec") {
  // typical_segments() scaled down 8 times: every byte of every frame is flipped once, and each
  // flip of a gzip or xz frame decodes the whole frame before its check fails.
  using elf::kPfR, elf::kPfW, elf::kPfX;
  KernelInput input = input_from(test::make_kernel_elf({{0x1000000, 0x4000, 0x4000, kPfR | kPfX},
                                                        {0x1200000, 0x1000, 0x1000, kPfR | kPfW},
                                                        {0x1201000, 0x800, 0x800, kPfR | kPfW, 0},
                                                        {0x1202000, 0x800, 0x1000, kPfR | kPfW | kPfX}}));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    std::vector<uint64_t> passed = flips_let_through(codec, payload, layout_compact(input));
    if (codec != Codec::kGzip) {
      CHECK(passed.empty());
      continue;
    }
    // gzip's CRC32 covers the decoded bytes, not the member header's MTIME, XFL and OS (bytes 4-9):
    // a flip there changes nothing the kernel gets (checked above), so it is let through.
    std::vector<uint64_t> header;
    for (size_t i = 0; i < payload.frames.size(); ++i)
      for (uint64_t at = 4; at < 10; ++at) header.push_back(at);
    CHECK(passed == header);
  }
}

TEST_CASE("helpers decode frames alongside the caller: the same kernel, and the first failing frame reported") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    Run run = unpack(codec, payload, kImageBase, 0x200000, 3);
    check_kernel(run, input);
    CHECK(run.result.workers_started == 3);
    CHECK(run.result.frames == payload.frames.size() - 1);
    // The helpers are handed work: with the first helper let through the queue before the caller
    // joins (the scheduler decides otherwise), it decodes frames and the kernel is the same.
    Run helped = unpack(codec, payload, kImageBase, 0x200000, 3, 0, true);
    check_kernel(helped, input);
    CHECK(helped.result.frames_by_caller < helped.result.frames);
    // Each helper has a codec state of its own in the work area.
    Run single = unpack(codec, payload);
    CHECK(run.result.work.size() > single.result.work.size());
    if (digest_for(codec) != FrameDigest::kXxh3) continue;
    FramedPayload wrong = payload;
    wrong.frames[7].digest = wrong.frames[7].digest + 1;
    wrong.frames[2].digest = wrong.frames[2].digest + 1;
    // Whichever of the two the queue hands out first, every time, however the CPUs race.
    std::vector<uint32_t> order(payload.frames.size() - 1);
    order_by_cost(payload.frames.data(), static_cast<uint32_t>(payload.frames.size()), order.data());
    uint32_t first = *std::find_if(order.begin(), order.end(), [](uint32_t i) { return i == 2 || i == 7; });
    for (int attempt = 0; attempt < 5; ++attempt) {
      Run refused = unpack(codec, wrong, kImageBase, 0x200000, 3);
      REQUIRE_FALSE(refused.status.ok());
      CHECK(std::string(refused.status.message) == "payload frame digest mismatch (corrupt payload)");
      CHECK(refused.status.a == first);
    }
  }
}

TEST_CASE("every CPU that decodes is prepared once, with the kernel's destination and the largest frame") {
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  FramedPayload payload = compressed_payload(input, Codec::kLz4);
  // The most one item touches: the largest frame's compressed and decoded bytes, and an arena.
  uint64_t largest = 0, codec_state = 0;
  for (const FrameEntry& f : payload.frames) largest = std::max<uint64_t>(largest, f.payload_size + f.size);
  REQUIRE(codec_state_size(Codec::kLz4, payload.bytes.data(), payload.bytes.size(), &codec_state).ok());
  REQUIRE(largest > 0);
  Run run = unpack(Codec::kLz4, payload, kImageBase, 0x200000, 3);
  check_kernel(run, input);
  REQUIRE(run.prepared.size() == 4);
  std::vector<uint32_t> indices;
  for (const test::ThreadWorkers::Prepared& p : run.prepared) {
    indices.push_back(p.index);
    CHECK(p.ram == run.memory->at(run.result.base));
    CHECK(p.size == input.kernel.span());
    CHECK(p.working_set == largest + kArenaSize + align_up(codec_state, 4096));
  }
  std::sort(indices.begin(), indices.end());
  CHECK(indices == std::vector<uint32_t>{0, 1, 2, 3});  // the caller's, then each helper's
}

TEST_CASE("a helper stopped inside an item leaves it to the caller, which does it again") {
  // The held helper takes the first item handed out (the costliest frame), scrambles its destination with 0xCC
  // and stays there until finish(); the caller must decode that frame again, from scratch.
  std::vector<test::SegmentSpec> segments = test::typical_segments();
  segments[3].memsz = 0x6000 + 0x180000;  // zero pieces too
  KernelInput input = input_from(test::make_kernel_elf(segments));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    FramedPayload payload = compressed_payload(input, codec);
    Run run = unpack(codec, payload, kImageBase, 0x200000, 2, 1);
    check_kernel(run, input);
    CHECK(run.result.redone == 1);
    CHECK(run.result.frames == payload.frames.size() - 1);
  }
}

TEST_CASE("helpers zero a large bss in pieces alongside the frames") {
  // 1.25 MiB past p_filesz in the first segment and 5.5 MiB in the last: two pieces and six,
  // shared out with the frames; check_kernel finds every byte zero where memory held its canary.
  std::vector<test::SegmentSpec> segments = test::typical_segments();
  segments[0].memsz = 0x23000 + 0x140000;
  segments[3].memsz = 0x6000 + 0x580000;
  KernelInput input = input_from(test::make_kernel_elf(segments));
  for (uint32_t threads : {0u, 1u, 3u}) {
    CAPTURE(threads);
    Run run = unpack(Codec::kLz4, compressed_payload(input, Codec::kLz4), kImageBase, 0x200000, threads);
    check_kernel(run, input);
  }
}

TEST_CASE("the kernel's bss and brk are left as memory held them, the rest of every tail zeroed") {
  // A 3 MiB tail on the last segment; the kernel clears 1 MiB of it itself (its .bss and .brk,
  // PackerRecord::bss_page): the stub zeroes the bytes on either side and leaves that MiB alone.
  std::vector<test::SegmentSpec> segments = test::typical_segments();
  segments[0].memsz = 0x23000 + 0x40000;
  segments[3].memsz = 0x6000 + 0x300000;
  KernelInput input = input_from(test::make_kernel_elf(segments));
  const LoadSegment& last = input.kernel.segments[3];
  Range left = range_of(last.paddr - input.kernel.physical.begin + 0x6000 + 0x100000, 0x100000);
  for (uint32_t threads : {0u, 3u}) {
    CAPTURE(threads);
    Run run = unpack(Codec::kLz4, compressed_payload(input, Codec::kLz4), kImageBase, 0x200000, threads, 0, false,
                     kRamSize, left);
    check_kernel(run, input, left);
    CHECK(run.memory->copy(run.result.base + left.begin, left.size()) ==
          std::vector<uint8_t>(left.size(), SimulatedMemory::kCanary));
  }
  // Raw, in place and moved: the moved kernel's tail lies partly where its file was loaded.
  PayloadElf elf = layout_mirrored(input, 0x100000 - kStubSize);
  for (uint64_t image_base : {kImageBase, uint64_t{0x1000000}}) {
    CAPTURE(image_base);
    Run run = unpack(Codec::kRaw, raw_payload(elf.bytes), image_base, 0x200000, 0, 0, false, kRamSize, left);
    check_kernel(run, input, left);
  }
}

TEST_CASE("the frame table is checked before any frame is decoded") {
  FrameEntry good[3] = {{0, 10, 0, 100, 0}, {10, 20, 100, 200, 0}, {30, 5, 300, 8, 0}};
  CHECK(check_frame_table(good, 3, 35, 8).ok());
  CHECK(check_frame_table(good, 3, 35, 0).ok());
  auto message = [](const FrameEntry* f, uint32_t n, uint64_t payload, uint64_t relocs) {
    StubStatus status = check_frame_table(f, n, payload, relocs);
    REQUIRE_FALSE(status.ok());
    return std::string(status.message);
  };
  CHECK(message(good, 0, 35, 0) == "bad number of payload frames");
  CHECK(message(good, kMaxFrames + 1, 35, 0) == "bad number of payload frames");
  CHECK(message(good, 1, 10, 8) == "payload has no frame for its relocation table");
  CHECK(message(good, 3, 36, 0) == "payload frames do not fill the payload");
  CHECK(message(good, 3, 34, 0) == "payload frame lies outside the payload");
  CHECK(message(good, 3, 35, 12) == "the last payload frame is not the relocation table");
  FrameEntry gap[3] = {good[0], good[1], good[2]};
  gap[1].payload_offset = 11;
  CHECK(message(gap, 3, 35, 0) == "payload frames are not contiguous");
  FrameEntry hole[3] = {good[0], good[1], good[2]};
  hole[2].file_offset = 301;
  CHECK(message(hole, 3, 35, 0) == "payload frames do not cover the kernel file in order");
  FrameEntry empty[3] = {good[0], good[1], good[2]};
  empty[1].size = 0;
  CHECK(message(empty, 3, 35, 0) == "payload frame has a bad size");
  FrameEntry coded[3] = {good[0], good[1], good[2]};
  coded[1].coding = static_cast<uint64_t>(FrameCoding::kCallTargets);
  CHECK(check_frame_table(coded, 3, 35, 8).ok());
  coded[1].coding = kFrameCodingCount;
  CHECK(message(coded, 3, 35, 8) == "payload frame has an unknown coding");
  coded[1].coding = 0;
  coded[2].coding = static_cast<uint64_t>(FrameCoding::kCallTargets);
  CHECK(message(coded, 3, 35, 8) == "the relocation table's frame has a coding");
  CHECK(check_frame_table(coded, 3, 35, 0).ok());  // without a table, the last frame is the ELF's

  // A frame must sit inside one segment's file bytes, or wholly between segments.
  KernelInput input = input_from(test::make_kernel_elf(test::typical_segments()));
  const KernelHeaders& k = layout_compact(input).kernel;
  const LoadSegment& first = k.segments[0];
  uint64_t offset = 0;
  FrameEntry inside{0, 1, first.offset + 0x10, 0x20, 0};
  REQUIRE(frame_target(k, inside, &offset).ok());
  CHECK(offset == first.paddr - k.physical.begin + 0x10);
  FrameEntry straddling{0, 1, first.offset + first.filesz - 0x10, 0x20, 0};
  CHECK(std::string(frame_target(k, straddling, &offset).message) == "payload frame straddles a segment's edge");
  FrameEntry past{0, 1, k.file_end - 0x10, 0x20, 0};
  CHECK(std::string(frame_target(k, past, &offset).message) == "payload frame ends past the kernel's last segment");
}

TEST_CASE(
    "the CPUs take the frames after the headers' costliest first: the most compressed bytes, then the lower index") {
  auto ordered = [](std::vector<uint64_t> packed) {
    std::vector<FrameEntry> frames;
    for (uint64_t size : packed) frames.push_back({0, size, 0, 1, 0});
    std::vector<uint32_t> order(frames.size() - 1, 0xFFFF);
    order_by_cost(frames.data(), static_cast<uint32_t>(frames.size()), order.data());
    return order;
  };
  // Frame 0's size is never looked at: the headers are decoded before the queue starts.
  CHECK(ordered({99, 5, 9, 1, 9, 30}) == std::vector<uint32_t>{5, 2, 4, 1, 3});
  CHECK(ordered({1}).empty());
  CHECK(ordered({1, 4}) == std::vector<uint32_t>{1});
  CHECK(ordered({1, 2, 2, 2}) == std::vector<uint32_t>{1, 2, 3});
  // kMaxFrames frames, the sizes drawn: a permutation of 1 .. n - 1, by size down, index up.
  std::vector<FrameEntry> many(kMaxFrames);
  uint64_t draw = 0x9E3779B97F4A7C15;
  for (FrameEntry& f : many) draw = draw * 6364136223846793005 + 1442695040888963407, f.payload_size = draw >> 52;
  std::vector<uint32_t> order(kMaxFrames - 1);
  order_by_cost(many.data(), kMaxFrames, order.data());
  std::vector<uint32_t> expected(kMaxFrames - 1);
  std::iota(expected.begin(), expected.end(), 1u);
  std::stable_sort(expected.begin(), expected.end(),
                   [&](uint32_t a, uint32_t b) { return many[a].payload_size > many[b].payload_size; });
  CHECK(order == expected);
}

TEST_CASE("no room for the kernel is an error, not a wild write") {
  KernelInput input = input_from(test::make_kernel_elf({{0x1000000, 0x1000, 0x7F00000}}));
  Run run = unpack(Codec::kZstd, compressed_payload(input, Codec::kZstd));
  REQUIRE_FALSE(run.status.ok());
  CHECK(std::string(run.status.message) == "no room for the kernel in memory");
  CHECK(run.memory->stray_writes({run.image}).empty());
}

// Debian 12's 6.1 (four segments, the entry in the text) and the newest kernel of trixie-backports
// (two segments since 6.16, the entry in the RW segment since 6.18).
TEST_CASE("[real kernel] Debian's 6.1 and newest kernels round-trip through the engine for every codec") {
  for (const char* series : {"", "bpo"}) {
    std::string path = test::real_kernel_path(series);
    CAPTURE(path);
    Result<KernelInput> input = load_kernel(Context{.input = path});  // extracts the vmlinux from the stock bzImage
    REQUIRE_MESSAGE(input.ok(), input.error().message);
    for (Codec codec : {Codec::kLz4, Codec::kZstd, Codec::kGzip, Codec::kXz}) {
      CAPTURE(codec_name(codec));
      Run run = unpack(codec, compressed_payload(*input, codec));
      check_kernel(run, *input);
    }
  }
}

TEST_CASE("[real kernel] a stock Debian bzImage round-trips: extract, pack with every codec, extract again") {
  std::string vmlinuz = test::real_kernel_path();
  Result<KernelInput> stock = load_kernel(Context{.input = vmlinuz});
  REQUIRE_MESSAGE(stock.ok(), stock.error().message);
  CHECK(stock->relocation_table.size() > 100000);
  CHECK(stock->source_format == StreamFormat::kLz4Legacy);  // Debian 12's cloud kernel
  CHECK(default_codec_for(*stock).codec == Codec::kLz4);
  REQUIRE(stock->version.has_value());
  CHECK(stock->version->find(" (debian-kernel@lists.debian.org) #1 SMP") != std::string::npos);
  for (Codec codec : {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    PackOptions options;
    options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 2};
    Result<std::vector<uint8_t>> image =
        build_image(Context{.output = "roundtrip.img"}, *stock, options, built_in_blobs(options.compress.codec));
    REQUIRE(image.ok());
    Result<BzImage> read = read_bzimage({*image, "roundtrip.img"});
    REQUIRE(read.ok());
    Result<KernelPayload> payload = extract_kernel(*read, {*image, "roundtrip.img"});
    REQUIRE_MESSAGE(payload.ok(), payload.error().message);
    CHECK(payload->relocation_table == stock->relocation_table);
    // Repacked with no codec named: the same codec, but zstd for gzip and lz4 for raw.
    Result<KernelInput> again = load_kernel_from(Context{.input = "roundtrip.img"}, *image);
    REQUIRE_MESSAGE(again.ok(), again.error().message);
    Codec expected = codec == Codec::kGzip ? Codec::kZstd : codec == Codec::kRaw ? Codec::kLz4 : codec;
    CHECK(default_codec_for(*again).codec == expected);
    CHECK(version_from_bzimage(*image, read->header, read->setup_size) == stock->version);
    CHECK(version_from_banner(payload->elf) == stock->version);  // the vmlinux's own banner agrees
    Result<KernelHeaders> k = parse_vmlinux({payload->elf, "extracted"});
    REQUIRE(k.ok());
    REQUIRE(k->segment_count == stock->kernel.segment_count);
    CHECK(k->entry == stock->kernel.entry);
    for (uint32_t i = 0; i < k->segment_count; ++i) {
      CHECK_MESSAGE(test::same_segment(stock->elf, stock->kernel.segments[i], payload->elf, k->segments[i]),
                    "segment " << i);
    }
  }
}

// stub/unpack/frame_decoder.cc, decode_lz4: linked blocks were given the whole region written so
// far, clamped to 2 GiB, as their history: past 2 GiB the "prefix" no longer ended at the block.
// The history is now the last 64 KiB before the block, wherever that is.
TEST_CASE("regression: an LZ4 block's history is the 64 KiB right before it, also past 2 GiB") {
  const auto* region = reinterpret_cast<const uint8_t*>(0x100000);  // never dereferenced
  Lz4History far = lz4_history(region, 3ull << 30);
  CHECK(far.begin == region + (3ull << 30) - 0x10000);
  CHECK(far.size == 0x10000);
  Lz4History near = lz4_history(region, 100);
  CHECK(near.begin == region);
  CHECK(near.size == 100);
  CHECK(lz4_history(region, 0).size == 0);
}

TEST_CASE("a raw payload with zero runs left out unpacks byte-identical, moved and in place") {
  std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
  const auto* phdrs = reinterpret_cast<const elf::Phdr*>(elf.data() + sizeof(elf::Ehdr));
  // 16 zero pages inside the 0x23000-byte text: left out of the file, zeroed by the engine.
  uint64_t text = phdrs[0].offset;
  std::fill(elf.begin() + static_cast<long>(text + 0x2000), elf.begin() + static_cast<long>(text + 0x12000), 0);
  KernelInput input = input_from(elf);
  PayloadElf compact = layout_compact(input, InnerZeros::kLeftOut);
  REQUIRE(compact.kernel.segment_count == 5);
  // Loaded low, the kernel moves up to its floor; the run's place was the text's bytes in the file.
  Run moved = unpack(Codec::kRaw, raw_payload(compact.bytes), kImageBase, 0x1000000);
  check_kernel(moved, input);
  CHECK(moved.result.moved == 0x13000 + 0x9000 + 0x2000 + 0x6000);
  // Loaded with its first segment on a 2 MiB boundary, the first piece stays and the rest move up.
  Run in_place = unpack(Codec::kRaw, raw_payload(compact.bytes), 0x400000 - kStubSize - 0x1000, 0x200000);
  check_kernel(in_place, input);
  CHECK(in_place.result.in_place);
  CHECK(in_place.result.base == 0x400000);
  CHECK(in_place.result.moved == 0x11000 + 0x9000 + 0x2000 + 0x6000);
}
