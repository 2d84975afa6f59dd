// Regression tests for bugs found by the fuzzers (fuzz/) and the bad-input suite (tests/bad_input).
// Each case names the function that was fixed and rebuilds the smallest input that showed it.
#include <doctest/doctest.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#include "stub/engine/boot_environment.h"
#include "tests/support/bytes.h"
#include "packer/bzimage_reader.h"
#include "stub/engine/frame_decoder.h"
#include "packer/frames.h"
#include "packer/image_writer.h"
#include "packer/info.h"
#include "packer/kernel_input.h"
#include "packer/layout.h"
#include "tests/support/packed_image.h"
#include "packer/placement_report.h"
#include "tests/support/simulated_memory.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

// stub/boot_environment.cc, add_usable_ram: a RAM entry whose start lies within a page of 2^64
// survived the clamp to 4 GiB, and aligning its start up wrapped to 0 — so all of 0..4 GiB,
// BIOS data and MMIO holes included, became free memory for the kernel.
TEST_CASE("regression: an e820 RAM entry near 2^64 adds no free memory") {
  auto memory = std::make_unique<test::SimulatedMemory>(0x90000, 0x10000);
  boot::BootParams params{};
  params.e820_entries = 2;
  params.e820_table[0] = {0x100000, 0x1000000, boot::kE820Ram};
  params.e820_table[1] = {0xFFFFFFFFFFFFF001ull, 0xFFE, boot::kE820Ram};
  BootEnvironment env;
  REQUIRE(read_boot_environment(params, 0x90000, *memory, &env).ok());
  REQUIRE(env.free.count() == 1);
  CHECK(env.free.at(0).begin == 0x100000);
  CHECK(env.free.at(0).end == 0x1100000);
}

// packer/image_writer.cc, build_payload: a raw image stores the kernel's whole physical span. A
// valid ELF with two small segments 3.7 GiB apart made `kpack --raw` allocate and zero that much,
// dying of std::bad_alloc (SIGABRT) under any memory limit. It is now refused up front.
TEST_CASE("regression: a raw image of a kernel spanning 3.7 GiB is refused, not allocated") {
  Result<KernelInput> input =
      kernel_input_from_elf(test::make_kernel_elf({{0x1000000, 0x1000, 0x1000}, {0xF0000000, 0x1000, 0x1000}}), "huge.elf");
  REQUIRE(input.ok());
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  Result<std::vector<uint8_t>> image = build_image(*input, options, built_in_blobs(options.compress.codec), "out.img");
  REQUIRE_FALSE(image.ok());
  CHECK(image.error().message.find("span") != std::string::npos);
}

// packer/layout.cc, rewrite: program headers were matched to their new place by file offset and
// size alone. Two bss-only segments (p_filesz 0) at one offset both took the first one's place,
// the rewritten ELF had overlapping segments, and `kpack --raw` died on __builtin_trap (SIGILL).
TEST_CASE("regression: two bss-only segments at one file offset survive both layouts") {
  Result<KernelInput> input =
      kernel_input_from_elf(test::make_kernel_elf({{0x1000000, 0, 0x1000}, {0x1200000, 0, 0x2000}}), "bss.elf");
  REQUIRE(input.ok());
  for (const PayloadElf& out : {layout_mirrored(*input, 0x1000), layout_compact(*input)}) {
    KernelHeaders again;
    REQUIRE(parse_kernel_headers(out.bytes.data(), out.bytes.size(), out.bytes.size(), &again).ok());
    REQUIRE(again.segment_count == 2);
    CHECK(again.physical.begin == 0x1000000);
    CHECK(again.physical.end == 0x1202000);
  }
}

namespace {

std::vector<uint8_t> packed_image() { return test::pack_image(test::synthetic_input(), Codec::kLz4); }

// `kpack info`'s text for `image`, or its error.
std::string info_of(const std::vector<uint8_t>& image) {
  Status status = Ok{};
  std::string printed = test::printed_by([&](std::FILE* out) { status = print_image_info(image, "out.img", out); });
  return status.ok() ? printed : "error: " + status.error().message;
}

uint64_t record_offset_in_file(const std::vector<uint8_t>& image) {
  uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
  return setup_size + stub_record_offset(test::le32_at(image, 0x268));
}

}  // namespace

// packer/placement_report.cc, report_one: `load + size > kRamSize` wrapped for a pref_address near
// 2^64, and the report memcpy'd the image far outside its simulated RAM (SIGSEGV). The header is
// now refused (bzimage_reader.cc), and the report's bound is overflow-safe for any load address.
TEST_CASE("regression: a pref_address near 2^64 is an error, and the placement report cannot wrap") {
  std::vector<uint8_t> image = packed_image();
  store_le<uint64_t>(image.data() + 0x258, 0xFFFFFFFFFFE00000ull);
  CHECK(info_of(image) ==
        "error: out.img: the setup header's pref_address 0xffffffffffe00000 plus its init_size " +
            hex(test::le32_at(image, 0x260)) + " wraps around the address space");

  Result<BzImage> read = read_bzimage(packed_image(), "out.img");
  REQUIRE(read.ok());
  read->header.pref_address = 0xFFFFFFFFFFE00000ull;  // as if the header check were bypassed
  std::vector<uint8_t> file = packed_image();
  std::string report = test::printed_by([&](std::FILE* out) { print_placement_report(*read, file, out); });
  CHECK(report.find("at 0xffffffffffe00000 (pref_address): does not fit the simulated 512 MiB machine") !=
        std::string::npos);
}

// packer/placement_report.cc: `result.base % info.kernel_alignment` divided by zero (SIGFPE) for a
// record with kernel_alignment 0. The record is now checked as the stub checks it, before use.
TEST_CASE("regression: a kpack record with kernel_alignment 0 is an error, not SIGFPE") {
  std::vector<uint8_t> image = packed_image();
  store_le<uint64_t>(image.data() + record_offset_in_file(image) + offsetof(StubRecord, kernel_alignment), 0);
  CHECK(info_of(image).starts_with(
      "error: out.img: the kpack record's kernel alignment is not a power of two from 2 MiB to 1 GiB (0, 0)"));
}

// stub/engine/frame_decoder.cc, decode_lz4: linked blocks were given the whole region written so
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

// packer/frames.cc, append_frames: std::bad_alloc on a compression worker escaped the thread and
// called std::terminate (SIGABRT) instead of the one-line error the main thread gives.
TEST_CASE("regression: running out of memory on a compression worker is an error") {
  std::vector<uint8_t> a(100, 1), b(100, 2), c(100, 3);
  FramedPayload out;
  std::vector<FramePiece> pieces{{a}, {b}, {c}};
  FrameWriter failing = [](const CompressOptions&, std::span<const uint8_t> piece, std::vector<uint8_t>& frame,
                           const std::string&) -> Status {
    if (piece[0] == 2) throw std::bad_alloc();
    frame.assign(piece.begin(), piece.end());
    return Ok{};
  };
  Status status = append_frames({Codec::kLz4, 1, 3}, pieces, out, "out.img", nullptr, failing);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "out.img: out of memory while compressing");
}

// stub/engine/kernel_headers.cc, parse_kernel_headers (found by fuzz_elf in an hour-long run): the
// compact layout gives an all-zero segment no file bytes, so the next segment lands at the same
// offset. Listed after it in the program headers, that segment sorted first, and the empty one
// then seemed to overlap it: the packer's own rewrite failed its check (a trap in layout.cc).
// Segments without file bytes now sort first at equal offsets.
TEST_CASE("regression: an all-zero segment listed after its neighbour survives the compact layout") {
  std::vector<uint8_t> elf = test::make_kernel_elf({{0x1000000, 0x1000, 0x1000}, {0x1200000, 0x800, 0x1000}});
  auto* phdrs = reinterpret_cast<elf::Phdr*>(elf.data() + sizeof(elf::Ehdr));
  // The first segment's bytes become zeros (the compact layout then keeps none of them), and the
  // program headers list the second segment first.
  std::fill(elf.begin() + static_cast<long>(uint64_t{phdrs[0].offset}),
            elf.begin() + static_cast<long>(uint64_t{phdrs[0].offset} + 0x1000), 0);
  std::swap(phdrs[0], phdrs[1]);
  Result<KernelInput> input = kernel_input_from_elf(elf, "zero.elf");
  REQUIRE(input.ok());
  PayloadElf compact = layout_compact(*input);
  CHECK(compact.kernel.segment_count == 2);
  CHECK(compact.kernel.segments[0].filesz == 0);
  CHECK(compact.kernel.segments[1].offset == compact.kernel.segments[0].offset);
}

// stub/engine/unpack.cc (found by fuzz_bzimage in an hour-long run): a record whose
// kernel_alignment exceeds the ELF's own got the kernel placed at the ELF's alignment only, and
// `kpack info` reported "KERNEL ADDRESS NOT ACCEPTABLE". The engine now aligns the kernel to the
// larger of the two.
TEST_CASE("regression: the kernel is placed at the record's alignment when that is the larger") {
  for (Codec codec : {Codec::kRaw, Codec::kLz4}) {
    CAPTURE(codec_name(codec));
    std::vector<uint8_t> image = test::pack_image(test::synthetic_input(), codec);
    store_le<uint64_t>(image.data() + record_offset_in_file(image) + offsetof(StubRecord, kernel_alignment),
                       64ull << 20);
    std::string info = info_of(image);
    CHECK(info.find("NOT ACCEPTABLE") == std::string::npos);
    CHECK(info.find("kernel at 0x04000000") != std::string::npos);  // the first 64 MiB boundary above 16 MiB
  }
}
