// kpack info's placement report: the stub's engine run on a simulated machine for each load
// address; every codec must place the kernel without touching the live image.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "bzimage_reader.h"
#include "image_writer.h"
#include "kernel_input.h"
#include "placement_report.h"
#include "synthetic_kernel.h"

using namespace kpack;

namespace {

std::string report_for(Codec codec) {
  Result<KernelInput> input = kernel_input_from_elf(test::make_kernel_elf(test::typical_segments()), "test");
  REQUIRE(input.ok());
  PackOptions options;
  options.compress = {codec, codec == Codec::kRaw ? 0 : 3, 1};
  Result<std::vector<uint8_t>> file = build_image(*input, options, built_in_blobs(), "out.img");
  REQUIRE(file.ok());
  Result<BzImage> image = read_bzimage(*file, "out.img");
  REQUIRE(image.ok());

  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  REQUIRE(out);
  print_placement_report(*image, *file, out);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
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
