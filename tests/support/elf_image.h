// kpack --elf images for the tests. Their stub is a stand-in of the real one's shape (a page of
// zeros with the layout block, its PVH entry at kTestPvhEntry), so the header bytes are known
// exactly and tests of the format do not depend on the stub's code; tests of the built-in stubs
// pack with built_in_blobs.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "formats/kpack_image.h"
#include "packer/image/elf_writer.h"
#include "packer/image/image_writer.h"

namespace kpack::test {

inline constexpr uint32_t kTestPvhEntry = 0x100;
inline constexpr uint64_t kTestStubSize = 4096;

// Two sectors of setup and a one-page stub holding only its layout block.
inline ImageBlobs stand_in_blobs() {
  static const uint8_t setup[1024] = {};
  alignas(16) static uint8_t stub[kTestStubSize] = {};
  StubLayout layout{};
  std::memcpy(layout.magic, kStubLayoutMagic, sizeof(layout.magic));
  layout.rodata_start = layout.data_start = kTestStubSize;
  layout.efi_entry = layout.handover_entry = 0x200;
  layout.pvh_entry = kTestPvhEntry;
  std::memcpy(stub + kStubLayoutOffset, &layout, sizeof(layout));
  return ImageBlobs{setup, stub};
}

// The bzImage an ELF is compared with: raw images laid out compact, as build_elf_image lays them.
inline PackOptions options_for(Codec codec) {
  PackOptions options;
  options.raw_layout = RawLayout::kCompact;
  options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
  return options;
}

// `input` as kpack --elf --CODEC writes it, with `blobs` (the stand-in by default).
inline ElfImage pack_elf(const KernelInput& input, Codec codec, const PackOptions* given = nullptr,
                         const ImageBlobs& blobs = stand_in_blobs()) {
  PackOptions options = given ? *given : options_for(codec);
  Result<ElfImage> image = build_elf_image(Context{.output = "out.elf"}, input, options, blobs);
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return *image;
}

}  // namespace kpack::test
