// kpack info's placement report: the stub's engine run on a simulated machine for each load
// address; every codec must place the kernel without touching the live image.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "packer/input/bzimage_reader.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "packer/read/placement_report.h"
#include "tests/support/packed_image.h"
#include "packer/read/info.h"
#include "stub/unpack/packer_record_unpack.h"
#include "tests/support/bytes.h"

using namespace kpack;

namespace {

// Where a compact raw image's pref_address lies: its first segment, a page into the payload, on
// 16 MiB. Printed as the report prints load addresses; it moves with the stub's size.
std::string raw_pref_address_text() {
  std::vector<uint8_t> file = test::pack_image(test::synthetic_input(), Codec::kRaw, 3, RawLayout::kCompact);
  char text[32];
  std::snprintf(text, sizeof text, "at 0x%08x (pref_address)", 0x1000000u - (test::le32_at(file, 0x248) + 0x1000u));
  return text;
}

std::string report_for(Codec codec, RawLayout layout = RawLayout::kCompact) {
  std::vector<uint8_t> file = test::pack_image(test::synthetic_input(), codec, 3, layout);
  Result<BzImage> image = read_bzimage({file, "out.img"});
  REQUIRE(image.ok());
  return test::printed_by([&](std::FILE* out) { print_placement_report(*image, file, out); });
}

std::vector<uint8_t> packed_image() { return test::pack_image(test::synthetic_input(), Codec::kLz4); }

// `kpack info`'s text for `image`, or its error.
std::string info_of(const std::vector<uint8_t>& image) {
  Status status = Ok{};
  std::string printed = test::printed_by([&](std::FILE* out) { status = print_image_info({image, "out.img"}, out); });
  return status.ok() ? printed : "error: " + status.error().message;
}

uint64_t packer_record_offset_in_file(const std::vector<uint8_t>& image) {
  uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
  return setup_size + packer_record_offset(test::le32_at(image, 0x268));
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("placement report: a kernel for every load address, the live image untouched") {
  for (Codec codec : {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    CAPTURE(codec_name(codec));
    std::string report = report_for(codec);
    CAPTURE(report);
    CHECK(report.find("at 0x00100000 (1 MiB") != std::string::npos);
    // A raw image's pref_address puts its first segment at 16 MiB.
    const bool raw = codec == Codec::kRaw;
    CHECK(report.find(raw ? raw_pref_address_text() : "at pref_address 0x00100000: as at 1 MiB") != std::string::npos);
    CHECK(report.find("at 0x01000000 (16 MiB") != std::string::npos);
    CHECK(count(report, "kernel at 0x") == (raw ? 4 : 3));  // 1 MiB, (pref_address,) 16 MiB, highest fit
    CHECK(count(report, "halts") == 0);
    CHECK(count(report, "WROTE OVER") == 0);
    CHECK(count(report, "NOT ACCEPTABLE") == 0);
  }
  // Raw at pref_address: the first segment stays, the others move up over the zeros the file
  // leaves out (the synthetic kernel has none: nothing moves).
  CHECK(report_for(Codec::kRaw).find(raw_pref_address_text() + ": kernel at 0x01000000, entry 0x01000000, in place") !=
        std::string::npos);
  // In place (the default layout): at 1 MiB, where pref_address says too, nothing moves; at 16 MiB
  // every segment moves once.
  std::string in_place = report_for(Codec::kRaw, RawLayout::kInPlace);
  CAPTURE(in_place);
  CHECK(in_place.find("at 0x00100000 (1 MiB: QEMU -kernel, GRUB linux16, ISOLINUX): kernel at 0x01000000, entry "
                      "0x01000000, in place (nothing moved)\n") != std::string::npos);
  CHECK(in_place.find("at pref_address 0x00100000: as at 1 MiB\n") != std::string::npos);
  CHECK(in_place.find("at 0x01000000 (16 MiB: kexec_file_load's lowest): kernel at 0x02000000, entry 0x02000000, "
                      "moved: 212992 bytes\n") != std::string::npos);
  CHECK(count(in_place, "kernel at 0x") == 3);
}

// packer/read/placement_report.cc, report_one: `load + size > kRamSize` wrapped for a pref_address near
// 2^64, and the report memcpy'd the image far outside its simulated RAM (SIGSEGV). The header is
// now refused (bzimage_reader.cc), and the report's bound is overflow-safe for any load address.
TEST_CASE("regression: a pref_address near 2^64 is an error, and the placement report cannot wrap") {
  std::vector<uint8_t> image = packed_image();
  store_le<uint64_t>(image.data() + 0x258, 0xFFFFFFFFFFE00000ull);
  CHECK(info_of(image) == "error: out.img: the setup header's pref_address 0xffffffffffe00000 plus its init_size " +
                              hex(test::le32_at(image, 0x260)) + " wraps around the address space");

  Result<BzImage> read = read_bzimage({packed_image(), "out.img"});
  REQUIRE(read.ok());
  read->header.pref_address = 0xFFFFFFFFFFE00000ull;  // as if the header check were bypassed
  std::vector<uint8_t> file = packed_image();
  std::string report = test::printed_by([&](std::FILE* out) { print_placement_report(*read, file, out); });
  CHECK(report.find("at 0xffffffffffe00000 (pref_address): does not fit the simulated 512 MiB machine") !=
        std::string::npos);
}

// packer/read/placement_report.cc: `result.base % info.kernel_alignment` divided by zero (SIGFPE) for a
// record with kernel_alignment 0. The record is now checked as the stub checks it, before use.
TEST_CASE("regression: a kpack record with kernel_alignment 0 is an error, not SIGFPE") {
  std::vector<uint8_t> image = packed_image();
  store_le<uint64_t>(image.data() + packer_record_offset_in_file(image) + offsetof(PackerRecord, kernel_alignment), 0);
  CHECK(info_of(image).starts_with(
      "error: out.img: the kpack record's kernel alignment is not a power of two from 2 MiB to 1 GiB (0, 0)"));
}

// stub/unpack/unpack.cc (found by fuzz_bzimage in an hour-long run): a record whose
// kernel_alignment exceeds the ELF's own got the kernel placed at the ELF's alignment only, and
// `kpack info` reported "KERNEL ADDRESS NOT ACCEPTABLE". The engine now aligns the kernel to the
// larger of the two.
TEST_CASE("regression: the kernel is placed at the record's alignment when that is the larger") {
  for (Codec codec : {Codec::kRaw, Codec::kLz4}) {
    CAPTURE(codec_name(codec));
    std::vector<uint8_t> image = test::pack_image(test::synthetic_input(), codec);
    store_le<uint64_t>(image.data() + packer_record_offset_in_file(image) + offsetof(PackerRecord, kernel_alignment),
                       64ull << 20);
    std::string info = info_of(image);
    CHECK(info.find("NOT ACCEPTABLE") == std::string::npos);
    CHECK(info.find("kernel at 0x04000000") != std::string::npos);  // the first 64 MiB boundary above 16 MiB
  }
}
