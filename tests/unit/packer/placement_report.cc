// kpack info's placement report: the stub's engine run on a simulated machine for each load
// address; every codec must place the kernel without touching the live image.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "packer/bzimage_reader.h"
#include "packer/image_writer.h"
#include "packer/kernel_input.h"
#include "packer/placement_report.h"
#include "tests/support/packed_image.h"

using namespace kpack;

namespace {

std::string report_for(Codec codec) {
  std::vector<uint8_t> file = test::pack_image(test::synthetic_input(), codec, 3);
  Result<BzImage> image = read_bzimage(file, "out.img");
  REQUIRE(image.ok());
  return test::printed_by([&](std::FILE* out) { print_placement_report(*image, file, out); });
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
    CHECK(report.find("at pref_address 0x00100000: as at 1 MiB") != std::string::npos);
    CHECK(report.find("at 0x01000000 (16 MiB") != std::string::npos);
    CHECK(count(report, "kernel at 0x") == 3);  // 1 MiB, 16 MiB, highest fit
    CHECK(count(report, "halts") == 0);
    CHECK(count(report, "WROTE OVER") == 0);
    CHECK(count(report, "NOT ACCEPTABLE") == 0);
  }
  // Raw at 1 MiB: the layout mirrors physical addresses, so nothing moves.
  CHECK(report_for(Codec::kRaw).find("in place") != std::string::npos);
}
