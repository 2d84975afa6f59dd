// The PE/COFF side of a packed image, field by field (formats/pe.h), and `kpack info`'s reader.
#include <doctest/doctest.h>

#include <cstring>

#include "tests/support/bytes.h"
#include "formats/kpack_image.h"
#include "formats/pe.h"
#include "packer/base/file_io.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "tests/support/packed_image.h"
#include "packer/image/pe_headers.h"
#include "tests/support/real_kernel.h"

using namespace kpack;

namespace {

struct Expected {
  const char* name;
  uint32_t characteristics;
};

constexpr uint32_t kRead = 0x40000000, kWrite = 0x80000000, kExecute = 0x20000000, kCode = 0x20, kData = 0x40,
                   kDiscardable = 0x02000000;

std::vector<uint8_t> pack_with(Codec codec, std::vector<uint8_t> sbat = {}, RawLayout layout = RawLayout::kInPlace) {
  PackOptions options;
  options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
  options.raw_layout = layout;
  options.sbat = std::move(sbat);
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, test::synthetic_input(), options, built_in_blobs(codec));
  REQUIRE_MESSAGE(image.ok(), image.error().message);
  return *image;
}

}  // namespace

TEST_CASE("a packed image is a PE32+ EFI application for x86-64, header by header") {
  const std::pair<Codec, RawLayout> packings[] = {
      {Codec::kRaw, RawLayout::kInPlace}, {Codec::kRaw, RawLayout::kCompact}, {Codec::kLz4, RawLayout::kInPlace}};
  for (auto [codec, raw_layout] : packings) {
    CAPTURE(codec_name(codec));
    CAPTURE(raw_layout == RawLayout::kInPlace);
    ImageBlobs blobs = built_in_blobs(codec);  // one stub per codec, each with its own layout
    Result<StubLayout> layout = read_stub_layout({blobs.stub, "stub"});
    REQUIRE(layout.ok());
    std::vector<uint8_t> image = pack_with(codec, {}, raw_layout);
    uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
    uint64_t image_size = test::get<uint64_t>(image, setup_size + blobs.stub.size() + 32);
    uint64_t payload_offset = test::get<uint32_t>(image, 0x248);
    // A raw image runs on in memory through the kernel's bss, which its file leaves out.
    uint64_t init_size = test::get<uint32_t>(image, 0x260);
    const bool raw = codec == Codec::kRaw;
    // An in-place raw image's 15 MiB of zeros before the kernel split its payload in two.
    const bool in_place = raw && raw_layout == RawLayout::kInPlace;
    const uint32_t section_count = in_place ? 6 : 5;
    // MZ, Linux's PE magic, e_lfanew -> "PE\0\0" (raw bytes at the documented offsets).
    CHECK(image[0] == 'M');
    CHECK(image[1] == 'Z');
    CHECK(test::get<uint32_t>(image, 0x38) == 0x818223CD);
    CHECK(test::get<uint32_t>(image, 0x3C) == 0x40);
    CHECK(std::memcmp(image.data() + 0x40, "PE\0\0", 4) == 0);
    // COFF: AMD64, five sections (six in place), a PE32+ optional header with six directories,
    // EXECUTABLE | LINE_NUMS_STRIPPED | DEBUG_STRIPPED and not RELOCS_STRIPPED (shim refuses that).
    CHECK(test::get<uint16_t>(image, 0x44) == 0x8664);
    CHECK(test::get<uint16_t>(image, 0x46) == section_count);
    CHECK(test::get<uint16_t>(image, 0x54) == 112 + 6 * 8);
    CHECK(test::get<uint16_t>(image, 0x56) == 0x0206);
    const uint64_t o = 0x58;  // the optional header
    CHECK(test::get<uint16_t>(image, o + 0) == 0x020B);
    uint64_t pm_rva = setup_size;  // every RVA is the file offset
    CHECK(setup_size % 0x1000 == 0);
    CHECK(test::get<uint32_t>(image, o + 16) == pm_rva + layout->efi_entry);  // AddressOfEntryPoint
    CHECK(test::get<uint32_t>(image, o + 20) == pm_rva);                      // BaseOfCode
    CHECK(test::get<uint64_t>(image, o + 24) == 0);                           // ImageBase
    CHECK(test::get<uint32_t>(image, o + 32) == 0x1000);                      // SectionAlignment
    CHECK(test::get<uint32_t>(image, o + 36) == 0x200);                       // FileAlignment
    CHECK(test::get<uint16_t>(image, o + 44) == 3);  // MajorImageVersion: initrd by LoadFile2 and initrd=
    const uint64_t memory_size = raw ? init_size : (image_size + 0xFFF) / 0x1000 * 0x1000;
    CHECK(test::get<uint32_t>(image, o + 56) == pm_rva + memory_size);                    // SizeOfImage
    CHECK(test::get<uint32_t>(image, o + 60) == 0x1000);                                  // SizeOfHeaders
    CHECK(test::get<uint32_t>(image, o + 64) == 0);                                       // CheckSum
    CHECK(test::get<uint16_t>(image, o + 68) == 10);                                      // EFI application
    CHECK(test::get<uint16_t>(image, o + 70) == 0x0100);                                  // NX_COMPAT
    CHECK(test::get<uint32_t>(image, o + 108) == 6);                                      // NumberOfRvaAndSizes
    for (int d = 0; d < 6; ++d) CHECK(test::get<uint64_t>(image, o + 112 + 8 * d) == 0);  // no relocs, unsigned

    // Sections: the protected-mode part keeps its file layout in memory (the stub is position
    // independent), each part with only the rights it needs.
    const Expected expected[] = {
        {".setup", kData | kRead | kDiscardable}, {".text", kCode | kExecute | kRead}, {".rodata", kData | kRead},
        {".data", kData | kRead | kWrite},        {".payload", kData | kRead},         {".kernel", kData | kRead}};
    // The payload's first page (shared with the stub's bss, the record and kernel_info when the
    // payload starts 16-byte aligned) belongs to .data; the rest is .payload, which for a raw
    // payload runs on in memory through the kernel's bss. In place, .payload is the ELF headers'
    // page and .kernel runs from the first segment, 15 MiB into the protected-mode part (16 MiB
    // floor - 1 MiB load), through the kernel's span (0x214000 bytes): the pages between belong to
    // no section, and nothing copies them.
    const uint64_t payload_page = (payload_offset + 0xFFF) / 0x1000 * 0x1000;
    if (in_place) CHECK(init_size == 0xF00000 + 0x214000);
    const uint64_t pm_begin[] = {0, 0, layout->rodata_start, layout->data_start, payload_page, 0xF00000};
    const uint64_t pm_end[] = {0,
                               layout->rodata_start,
                               layout->data_start,
                               payload_page,
                               in_place ? payload_page + 0x1000
                               : raw    ? init_size
                                        : image_size,
                               init_size};
    const uint64_t table = 0x40 + 4 + 20 + 160;
    for (uint32_t i = 0; i < section_count; ++i) {
      CAPTURE(expected[i].name);
      uint64_t at = table + 40 * i;
      CHECK(std::strncmp(reinterpret_cast<const char*>(image.data() + at), expected[i].name, 8) == 0);
      uint32_t virtual_size = test::get<uint32_t>(image, at + 8), rva = test::get<uint32_t>(image, at + 12);
      uint32_t raw_size = test::get<uint32_t>(image, at + 16), raw = test::get<uint32_t>(image, at + 20);
      CHECK(test::get<uint32_t>(image, at + 36) == expected[i].characteristics);
      CHECK(rva % 0x1000 == 0);
      CHECK(raw % 0x200 == 0);
      CHECK(raw_size % 0x200 == 0);
      CHECK(raw + raw_size <= image.size());
      if (i == 0) {
        CHECK(rva == 0x1000);
        CHECK(raw == 0x1000);
        CHECK(virtual_size == setup_size - 0x1000);
        continue;
      }
      CHECK(rva == pm_rva + pm_begin[i]);
      CHECK(raw == rva);
      CHECK(virtual_size == pm_end[i] - pm_begin[i]);
      // The last section's bytes in the file end with the image's; the in-place .payload's are
      // the headers' page.
      if (i == section_count - 1) CHECK(raw_size == (image_size - pm_begin[i] + 0x1FF) / 0x200 * 0x200);
      if (in_place && i == 4) CHECK(raw_size == 0x1000);
    }
    CHECK(table + section_count * 40 <= 0x1F1);  // the section table ends before the setup header

    // `kpack info`'s reader sees the same.
    Result<std::optional<PeView>> view = read_pe_view({image, "out.img"});
    REQUIRE(view.ok());
    REQUIRE(view->has_value());
    CHECK((*view)->entry == pm_rva + layout->efi_entry);
    CHECK((*view)->subsystem == 10);
    CHECK((*view)->sections.size() == section_count);
    CHECK((*view)->sections[4].name == ".payload");
    if (in_place) CHECK((*view)->sections[5].name == ".kernel");
    CHECK((*view)->signature_size == 0);
  }
}

TEST_CASE("--sbat adds a discardable .sbat section holding the given bytes") {
  std::vector<uint8_t> sbat(100, 'x');
  std::memcpy(sbat.data(), "sbat,1,SBAT Version", 19);
  std::vector<uint8_t> image = pack_with(Codec::kLz4, sbat);
  Result<std::optional<PeView>> view = read_pe_view({image, "out.img"});
  REQUIRE(view.ok());
  REQUIRE((*view)->sections.size() == 6);
  const PeSection& s = (*view)->sections[5];
  CHECK(s.name == ".sbat");
  CHECK(s.virtual_size == 100);
  CHECK(s.raw_size == 512);
  CHECK(s.characteristics == (kData | kRead | kDiscardable));
  CHECK(s.virtual_address ==
        (*view)->sections[4].virtual_address + ((*view)->sections[4].virtual_size + 0xFFF) / 0x1000 * 0x1000);
  CHECK(std::memcmp(image.data() + s.raw_offset, sbat.data(), sbat.size()) == 0);
  CHECK((*view)->size_of_image == s.virtual_address + 0x1000);
}

TEST_CASE("read_stub_layout refuses a stub without its layout block") {
  ImageBlobs blobs = built_in_blobs(Codec::kLz4);
  std::vector<uint8_t> stub(blobs.stub.begin(), blobs.stub.end());
  CHECK(read_stub_layout({stub, "stub"}).ok());
  stub[kStubLayoutOffset] ^= 1;
  Result<StubLayout> damaged = read_stub_layout({stub, "stub"});
  REQUIRE(!damaged.ok());
  CHECK(damaged.error().message == "stub: internal error: the stub's layout block is missing or damaged");
  // Every entry lies in the stub's code, the PVH entry (kpack --elf's note) too.
  stub[kStubLayoutOffset] ^= 1;
  StubLayout layout = *read_stub_layout({stub, "stub"});
  CHECK(layout.pvh_entry != 0);
  test::put(stub, kStubLayoutOffset + offsetof(StubLayout, pvh_entry), uint32_t{layout.rodata_start});
  CHECK_FALSE(read_stub_layout({stub, "stub"}).ok());
}

TEST_CASE("read_pe_view: no PE header is no view; a truncated one is a one-line error") {
  std::vector<uint8_t> plain(0x400, 0);
  Result<std::optional<PeView>> none = read_pe_view({plain, "plain.img"});
  REQUIRE(none.ok());
  CHECK(!none->has_value());
  std::vector<uint8_t> image = pack_with(Codec::kLz4);
  image.resize(0x40 + 4 + 20 + 100);  // cut inside the optional header
  Result<std::optional<PeView>> cut = read_pe_view({image, "cut.img"});
  REQUIRE(!cut.ok());
  CHECK(cut.error().message == "cut.img: PE header: optional header truncated");
}

TEST_CASE("[real kernel] a signed stock bzImage: the signature is seen, and the packed image is unsigned") {
  const std::string path = test::real_kernel_path();
  Result<std::vector<uint8_t>> file = read_file(path);
  REQUIRE(file.ok());
  Result<std::optional<PeView>> stock = read_pe_view({*file, path});
  REQUIRE(stock.ok());
  REQUIRE(stock->has_value());
  CHECK((*stock)->signature_size != 0);  // Debian signs its kernels

  Result<KernelInput> input = load_kernel(Context{.input = path});
  REQUIRE_MESSAGE(input.ok(), (input.ok() ? "" : input.error().message));
  CHECK(input->was_signed);  // what makes `kpack` print its note
  PackOptions options;
  options.compress = {Codec::kLz4, 1, 1};
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, *input, options, built_in_blobs(Codec::kLz4));
  REQUIRE(image.ok());
  Result<std::optional<PeView>> packed = read_pe_view({*image, "out.img"});
  REQUIRE(packed.ok());
  CHECK((*packed)->signature_size == 0);
  CHECK((*packed)->signature_offset == 0);
}
