// kpack images for the tests, built exactly as `kpack` builds them, and the text a printing
// function writes to a FILE*.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "tests/support/synthetic_kernel.h"

namespace kpack::test {

// The synthetic kernel most tests use (typical_segments()), as the packer reads it.
inline KernelInput synthetic_input() {
  Result<KernelInput> input = kernel_input_from_elf(make_kernel_elf(typical_segments()), "test");
  REQUIRE(input.ok());
  return *input;
}

// `input` packed with `codec` into an image named out.img (level is ignored for raw, `layout` for
// the others).
inline std::vector<uint8_t> pack_image(const KernelInput& input, Codec codec, int level = 1,
                                       RawLayout layout = RawLayout::kInPlace) {
  PackOptions options;
  options.compress = {codec, codec == Codec::kRaw ? 0 : level, 1};
  options.raw_layout = layout;
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return *image;
}

// What `print` writes to the stream it is given.
inline std::string printed_by(const std::function<void(std::FILE*)>& print) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  REQUIRE(out);
  print(out);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
}

}  // namespace kpack::test
