// bzImage reader tests on images assembled here field by field, plus the real Debian kernel the
// boot tests fetch.
#include <doctest/doctest.h>
#include <lz4hc.h>
#include <lzma.h>
#include <xxhash.h>

#include <array>
#include <cstring>

#include "formats/elf64.h"
#include "packer/input/bzimage_reader.h"
#include "packer/base/file_io.h"
#include "tests/support/real_kernel.h"
#include "tests/support/bytes.h"
#include "tests/support/checked_frames.h"

using namespace kpack;
using test::append_le32;
using test::put;

namespace {

constexpr uint32_t kStubBytes = 0x400;         // filler standing in for the decompressor before the payload
constexpr uint32_t kRecordOffset = 0x100;      // where make_bzimage puts a kpack record
constexpr uint32_t kFrameTableOffset = 0x200;  // and the record's frame table

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A vmlinux-shaped ELF: one PT_LOAD, a PT_NOTE, a .bss that occupies no file space, and the section
// headers last, so the file ends at shoff + 3 * 64.
constexpr uint64_t kElfShoff = 0x4000;
constexpr uint64_t kElfExtent = kElfShoff + 3 * sizeof(elf::Shdr);

std::vector<uint8_t> make_elf() {
  std::vector<uint8_t> out(kElfExtent, 0);
  elf::Ehdr ehdr{};
  std::memcpy(ehdr.ident, elf::kMagic, 4);
  ehdr.ident[4] = elf::kClass64;
  ehdr.ident[5] = elf::kDataLittle;
  ehdr.ident[6] = elf::kVersionCurrent;
  ehdr.type = elf::kTypeExec;
  ehdr.machine = elf::kMachineX86_64;
  ehdr.version = 1;
  ehdr.entry = 0x1000000;
  ehdr.phoff = sizeof(elf::Ehdr);
  ehdr.shoff = kElfShoff;
  ehdr.ehsize = sizeof(elf::Ehdr);
  ehdr.phentsize = sizeof(elf::Phdr);
  ehdr.phnum = 2;
  ehdr.shentsize = sizeof(elf::Shdr);
  ehdr.shnum = 3;
  put(out, 0, ehdr);

  elf::Phdr load{};
  load.type = elf::kPtLoad;
  load.flags = elf::kPfR | elf::kPfX;
  load.offset = 0x1000;
  load.vaddr = 0xffffffff81000000;
  load.paddr = 0x1000000;
  load.filesz = 0x3000;
  load.memsz = 0x3000;
  load.align = 0x200000;
  put(out, sizeof(elf::Ehdr), load);
  elf::Phdr note{};
  note.type = elf::kPtNote;
  note.offset = 0x2000;
  note.filesz = 0x20;
  put(out, sizeof(elf::Ehdr) + sizeof(elf::Phdr), note);

  elf::Shdr text{};
  text.type = 1;  // SHT_PROGBITS
  text.offset = 0x1000;
  text.size = 0x3000;
  put(out, kElfShoff + sizeof(elf::Shdr), text);
  elf::Shdr bss{};
  bss.type = 8;  // SHT_NOBITS: its offset and size describe memory, not file bytes
  bss.offset = 0x4000;
  bss.size = 0x100000;
  put(out, kElfShoff + 2 * sizeof(elf::Shdr), bss);
  for (size_t i = 0x1000; i < 0x4000; ++i) out[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  return out;
}

std::vector<uint8_t> make_relocs() {
  std::vector<uint8_t> out;
  for (uint32_t value : {0u, 0x81000010u, 0x81000020u, 0u, 0u, 0x81002000u}) append_le32(out, value);
  return out;
}

std::vector<uint8_t> kernel_bytes() {
  auto out = make_elf();
  const auto relocs = make_relocs();
  out.insert(out.end(), relocs.begin(), relocs.end());
  return out;
}

std::vector<uint8_t> compress(StreamFormat format, std::span<const uint8_t> data) {
  std::vector<uint8_t> out;
  switch (format) {
    case StreamFormat::kGzip:
      REQUIRE(append_frame(Context{.output = "t"}, {Codec::kGzip, 9, 1}, data, out).ok());
      return out;
    case StreamFormat::kZstd: out = test::checked_zstd(data); break;  // as the kernel's build writes it
    case StreamFormat::kLz4Frame:
      REQUIRE(append_frame(Context{.output = "t"}, {Codec::kLz4, 9, 1}, data, out).ok());
      break;
    case StreamFormat::kXz: {
      out.resize(lzma_stream_buffer_bound(data.size()));
      size_t pos = 0;
      REQUIRE(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, nullptr, data.data(), data.size(), out.data(), &pos,
                                      out.size()) == LZMA_OK);
      out.resize(pos);
      break;
    }
    case StreamFormat::kLz4Legacy: {
      out = {0x02, 0x21, 0x4C, 0x18};
      std::vector<char> scratch(LZ4_compressBound(8 << 20));
      const int written = LZ4_compress_HC(reinterpret_cast<const char*>(data.data()), scratch.data(),
                                          static_cast<int>(data.size()), static_cast<int>(scratch.size()), 9);
      REQUIRE(written > 0);
      append_le32(out, static_cast<uint32_t>(written));
      out.insert(out.end(), scratch.begin(), scratch.begin() + written);
      break;
    }
    case StreamFormat::kRaw: out.assign(data.begin(), data.end()); return out;
    default: FAIL("no compressor for this format in the tests");
  }
  // Like the kernel's size_append: every format but gzip carries the uncompressed size after it.
  append_le32(out, static_cast<uint32_t>(data.size()));
  return out;
}

struct ImageSpec {
  uint8_t setup_sects = 4;
  uint16_t version = boot::kProtocolVersion;
  std::optional<PackerRecord> stub_info;
  std::vector<FrameEntry> frames;  // the record's frame table, at kFrameTableOffset
};

std::vector<uint8_t> make_bzimage(std::span<const uint8_t> payload, const ImageSpec& spec = {}) {
  const uint32_t sects = spec.setup_sects == 0 ? boot::kDefaultSetupSects : spec.setup_sects;
  const size_t setup_size = (sects + 1) * boot::kSectorSize;
  std::vector<uint8_t> file(setup_size + kStubBytes, 0xCC);
  boot::SetupHeader hdr{};
  hdr.setup_sects = spec.setup_sects;
  hdr.boot_flag = boot::kBootFlag;
  hdr.jump = boot::kHeaderJump;
  hdr.header = boot::kHeaderMagic;
  hdr.version = spec.version;
  hdr.loadflags = boot::kLoadedHigh;
  hdr.code32_start = boot::kDefaultCode32Start;
  hdr.payload_offset = kStubBytes;
  hdr.payload_length = static_cast<uint32_t>(payload.size());
  hdr.init_size = 0x4000000;
  // The protected-mode part in 16-byte paragraphs, as the kernel's build writes it.
  hdr.syssize = static_cast<uint32_t>((kStubBytes + payload.size()) / 16);
  put(file, boot::kSetupHeaderOffset, hdr);
  if (spec.stub_info) {
    // The record goes right before kernel_info, as kpack writes it.
    hdr.kernel_info_offset = kRecordOffset + sizeof(PackerRecord);
    put(file, boot::kSetupHeaderOffset, hdr);
    put(file, setup_size + kRecordOffset, *spec.stub_info);
    for (size_t i = 0; i < spec.frames.size(); ++i)
      put(file, setup_size + kFrameTableOffset + i * sizeof(FrameEntry), spec.frames[i]);
  }
  file.insert(file.end(), payload.begin(), payload.end());
  return file;
}

PackerRecord make_stub_info(uint64_t payload_size) {
  PackerRecord info{};
  std::memcpy(info.magic, kPackerRecordMagic, sizeof(info.magic));
  info.version = kPackerRecordVersion;
  info.codec = static_cast<uint32_t>(Codec::kZstd);
  info.payload_offset = kStubBytes;
  info.payload_size = payload_size;
  info.image_size = kStubBytes + payload_size;
  info.min_kernel_address = 0x1000000;
  info.kernel_alignment = 0x200000;
  info.digest = static_cast<uint32_t>(FrameDigest::kXxh3);
  info.frame_table_offset = kFrameTableOffset;
  info.frame_count = 1;
  return info;
}

// The one frame of a payload, `packed`, that decodes to `size` bytes; its digest covers `packed`.
FrameEntry one_frame(std::span<const uint8_t> packed, uint64_t size) {
  return FrameEntry{0, packed.size(), 0, size, XXH3_64bits(packed.data(), packed.size())};
}

std::string error_of(std::span<const uint8_t> file) {
  auto image = read_bzimage({file, "bzImage"});
  return image.ok() ? "(no error)" : image.error().message;
}

}  // namespace

TEST_CASE("looks_like_bzimage") {
  const auto file = make_bzimage(compress(StreamFormat::kZstd, kernel_bytes()));
  CHECK(looks_like_bzimage(file));
  CHECK_FALSE(looks_like_bzimage(std::span(file).first(0x205)));
  CHECK(looks_like_bzimage(std::span(file).first(0x206)));
  CHECK_FALSE(looks_like_bzimage({}));
  auto other = file;
  other[0x203] = 'X';
  CHECK_FALSE(looks_like_bzimage(other));
}

TEST_CASE("read_bzimage and extract_kernel for every stock payload format") {
  const auto kernel = kernel_bytes();
  for (StreamFormat format : {StreamFormat::kGzip, StreamFormat::kXz, StreamFormat::kLz4Legacy, StreamFormat::kLz4Frame,
                              StreamFormat::kZstd, StreamFormat::kRaw}) {
    CAPTURE(stream_format_name(format));
    const auto payload = compress(format, kernel);
    const auto file = make_bzimage(payload);
    auto image = read_bzimage({file, "bzImage"});
    REQUIRE_MESSAGE(image.ok(), (image.ok() ? "" : image.error().message));
    CHECK(image->format == format);
    CHECK(image->setup_size == 5 * 512);
    CHECK(image->payload_offset == 5 * 512 + kStubBytes);
    CHECK(image->payload_size == payload.size());
    CHECK(image->header.version == boot::kProtocolVersion);
    CHECK(image->header.init_size == 0x4000000);
    CHECK_FALSE(image->packer_record.has_value());

    auto extracted = extract_kernel(*image, {file, "bzImage"});
    REQUIRE_MESSAGE(extracted.ok(), (extracted.ok() ? "" : extracted.error().message));
    CHECK(extracted->elf == make_elf());
    CHECK(extracted->relocation_table == make_relocs());
  }
}

TEST_CASE("setup_sects 0 means 4") {
  const auto file = make_bzimage(compress(StreamFormat::kZstd, kernel_bytes()), {.setup_sects = 0});
  auto image = read_bzimage({file, "bzImage"});
  REQUIRE(image.ok());
  CHECK(image->setup_size == 5 * 512);
  const auto bigger = make_bzimage(compress(StreamFormat::kZstd, kernel_bytes()), {.setup_sects = 30});
  auto big = read_bzimage({bigger, "bzImage"});
  REQUIRE(big.ok());
  CHECK(big->setup_size == 31 * 512);
  CHECK(big->payload_offset == 31 * 512 + kStubBytes);
}

TEST_CASE("a kpack record is found and checked") {
  const auto payload = compress(StreamFormat::kZstd, kernel_bytes());
  const auto info = make_stub_info(payload.size());
  const auto good_file =
      make_bzimage(payload, {.stub_info = info, .frames = {one_frame(payload, kernel_bytes().size())}});
  auto image = read_bzimage({good_file, "bzImage"});
  REQUIRE_MESSAGE(image.ok(), (image.ok() ? "" : image.error().message));
  REQUIRE(image->packer_record.has_value());
  CHECK(image->packer_record->frame_count == 1);
  // extract proves every frame against its digest, as the stub does.
  CHECK(extract_kernel(*image, {good_file, "bzImage"}).ok());
  FrameEntry wrong = one_frame(payload, kernel_bytes().size());
  wrong.digest = wrong.digest + 1;
  const auto bad_file = make_bzimage(payload, {.stub_info = info, .frames = {wrong}});
  auto bad = read_bzimage({bad_file, "bzImage"});
  REQUIRE(bad.ok());
  auto refused = extract_kernel(*bad, {bad_file, "bzImage"});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "bzImage: payload frame 0 does not match its digest (corrupt image)");
  FrameEntry short_frame = one_frame(std::span(payload).first(payload.size() - 1), kernel_bytes().size());
  const auto gap_file = make_bzimage(payload, {.stub_info = info, .frames = {short_frame}});
  auto gap = read_bzimage({gap_file, "bzImage"});
  REQUIRE(gap.ok());
  CHECK(contains(extract_kernel(*gap, {gap_file, "bzImage"}).error().message,
                 "bzImage: payload frames do not fill the payload ("));
  // The error for `info` with one field changed.
  auto error_with = [&](auto change) {
    PackerRecord changed = info;
    change(changed);
    return error_of(make_bzimage(payload, {.stub_info = changed}));
  };
  // The record's frame fields, checked as the stub checks them.
  CHECK(error_with([&](PackerRecord& r) { r.frame_count = 0; }) ==
        "bzImage: the kpack record's frame count does not suit its codec (0, 0) (kpack record at 0xb00)");
  CHECK(error_with([&](PackerRecord& r) { r.digest = 0; }) ==
        "bzImage: the kpack record names no digest its codec can use (0, 0) (kpack record at 0xb00)");
  CHECK(contains(error_with([&](PackerRecord& r) { r.frame_table_offset = kStubBytes - 8; }),
                 "bzImage: the kpack record's frame table lies outside the space before the payload"));
  CHECK(image->packer_record->codec == static_cast<uint32_t>(Codec::kZstd));
  CHECK(image->packer_record->kernel_alignment == 0x200000);
  CHECK(image->packer_record->payload_size == payload.size());

  CHECK(error_with([&](PackerRecord& r) { r.version = 7; }) ==
        "bzImage: written by a kpack with record version 7, this kpack reads version 5 (kpack record at 0xb00)");
  CHECK(contains(error_with([&](PackerRecord& r) { r.payload_size = payload.size() - 1; }),
                 "disagrees with the setup header"));
  CHECK(error_with([&](PackerRecord& r) { r.codec = 9; }) ==
        "bzImage: unknown payload codec in the kpack record (0x9, 0) (kpack record at 0xb00)");
  // The stub's own checks (stub/entry/packer_record_check.cc), word for word.
  CHECK(error_with([&](PackerRecord& r) { r.kernel_alignment = 0; }) ==
        "bzImage: the kpack record's kernel alignment is not a power of two from 2 MiB to 1 GiB (0, 0) "
        "(kpack record at 0xb00)");
  CHECK(error_with([&](PackerRecord& r) { r.image_size = 0x80; }) ==
        "bzImage: the kpack record's image size does not cover the stub (0x80, 0x158) (kpack record at 0xb00)");
  CHECK(error_with([&](PackerRecord& r) { r.flags = 0x10; }) ==
        "bzImage: unknown flags in the kpack record (0x10, 0) (kpack record at 0xb00)");
  CHECK(error_with([&](PackerRecord& r) {
          r.codec = static_cast<uint32_t>(Codec::kRaw), r.digest = 0, r.frame_count = 0, r.frame_table_offset = 0;
          r.flags = kRecordRelocationPlanes;
        }) == "bzImage: the kpack record codes a raw payload's relocation table (0x8, 0) (kpack record at 0xb00)");
  // A checked record's image size is what the packer wrote: past the file's end, the file lost its end.
  CHECK(error_with([&](PackerRecord& r) { r.image_size = kStubBytes + payload.size() + 1; }) ==
        "bzImage: file truncated: " + std::to_string(5 * 512 + kStubBytes + payload.size()) + " of " +
            std::to_string(5 * 512 + kStubBytes + payload.size() + 1) + " bytes (kpack record at 0xb00)");

  // Anywhere but right before kernel_info, the magic is just bytes (the stub has it in its rodata).
  auto file = make_bzimage(payload, {.stub_info = info});
  put(file, 5 * 512 + kRecordOffset, std::array<uint8_t, 8>{});
  put(file, 5 * 512 + 0x200, info);
  auto elsewhere = read_bzimage({file, "bzImage"});
  REQUIRE(elsewhere.ok());
  CHECK_FALSE(elsewhere->packer_record.has_value());
}

TEST_CASE("a PE/COFF-signed image is still a bzImage") {
  const auto payload = compress(StreamFormat::kZstd, kernel_bytes());
  auto file = make_bzimage(payload);
  file[0] = 'M', file[1] = 'Z';
  file.insert(file.end(), 2000, 0x30);  // a signature appended after the image
  auto image = read_bzimage({file, "vmlinuz"});
  REQUIRE(image.ok());
  auto extracted = extract_kernel(*image, {file, "vmlinuz"});
  REQUIRE(extracted.ok());
  CHECK(extracted->relocation_table == make_relocs());
}

TEST_CASE("bad images are errors naming the file") {
  const auto payload = compress(StreamFormat::kZstd, kernel_bytes());
  const auto good = make_bzimage(payload);

  // What a file is when it is no boot image, and how much of one is missing.
  CHECK(error_of(std::span(good).first(0x200)) ==
        "bzImage: is data of no known kind (first bytes 0xcc 0xcc 0xcc 0xcc), not a boot image (a bzImage or a "
        "kpack image)");
  CHECK(error_of({}) == "bzImage: is an empty file, not a boot image (a bzImage or a kpack image)");
  CHECK(error_of(std::span(good).first(0x210)) == "bzImage: file truncated: 528 of 620 bytes");
  const std::string text = "#!/bin/sh\necho this is no kernel\n";
  CHECK(error_of(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())) ==
        "bzImage: is text, not a boot image (a bzImage or a kpack image)");
  CHECK(error_of(make_elf()) == "bzImage: is a vmlinux ELF, not a boot image (a bzImage or a kpack image)");

  auto bad_flag = good;
  bad_flag[0x1FE] = 0x00;
  CHECK(error_of(bad_flag) == "bzImage: not a bzImage: boot flag is 0xaa00, expected 0xaa55");

  auto no_magic = good;
  no_magic[0x202] = 'X';
  CHECK(error_of(no_magic) ==
        "bzImage: is data of no known kind (first bytes 0xcc 0xcc 0xcc 0xcc), not a boot image (a bzImage or a "
        "kpack image)");

  const auto old = make_bzimage(payload, {.version = 0x0206});
  CHECK(error_of(old) == "bzImage: boot protocol 2.6 is too old (payload location needs 2.08)");

  // Cut within the setup sectors or the payload: the size syssize gives is missing.
  const std::string whole = std::to_string(5 * 512 + (kStubBytes + payload.size()) / 16 * 16);
  CHECK(error_of(std::span(good).first(0x600)) == "bzImage: file truncated: 1536 of " + whole + " bytes");
  auto outside = good;
  outside.resize(outside.size() - 20);
  CHECK(error_of(outside) == "bzImage: file truncated: " + std::to_string(outside.size()) + " of " + whole + " bytes");
  // Without syssize, the setup alone says how long the file was; the payload does not.
  auto no_size = good;
  put(no_size, 0x1F4, uint32_t{0});
  CHECK(error_of(std::span(no_size).first(0x600)) == "bzImage: file truncated: 1536 of 2560 bytes");
  CHECK(contains(error_of(std::span(no_size).first(0xA00)), "covers the whole"));
  no_size.resize(no_size.size() - 10);
  CHECK(error_of(no_size) == "bzImage: payload (offset 0x400, " + std::to_string(payload.size()) +
                                 " bytes) lies outside the " + std::to_string(kStubBytes + payload.size() - 10) +
                                 "-byte protected-mode part");

  auto huge_offset = good;
  boot::SetupHeader hdr;
  std::memcpy(&hdr, huge_offset.data() + boot::kSetupHeaderOffset, sizeof(hdr));
  hdr.payload_offset = 0xFFFFFFF0;
  put(huge_offset, boot::kSetupHeaderOffset, hdr);
  CHECK(contains(error_of(huge_offset), "lies outside the"));

  hdr.payload_offset = kStubBytes;
  hdr.payload_length = 0;
  auto empty = good;
  put(empty, boot::kSetupHeaderOffset, hdr);
  CHECK(error_of(empty) == "bzImage: the setup header gives an empty payload");

  auto unknown = make_bzimage(std::vector<uint8_t>{0xDE, 0xAD, 0xBE, 0xEF, 0, 1});
  CHECK(error_of(unknown) == "bzImage: unknown payload format (first bytes 0xde 0xad 0xbe 0xef 0 0x1)");
}

TEST_CASE("extract_kernel reports payload problems") {
  auto corrupt_payload = compress(StreamFormat::kZstd, kernel_bytes());
  corrupt_payload[corrupt_payload.size() / 2] ^= 0x40;
  const auto file = make_bzimage(corrupt_payload);
  auto image = read_bzimage({file, "vmlinuz"});
  REQUIRE(image.ok());
  auto extracted = extract_kernel(*image, {file, "vmlinuz"});
  REQUIRE_FALSE(extracted.ok());
  CHECK(contains(extracted.error().message, "vmlinuz: corrupt zstd payload"));

  const std::vector<uint8_t> bzip2 = {'B', 'Z', 'h', '9', 1, 2, 3};
  const auto bz_file = make_bzimage(bzip2);
  auto bz = read_bzimage({bz_file, "vmlinuz"});
  REQUIRE(bz.ok());
  CHECK(bz->format == StreamFormat::kBzip2);
  auto bz_extracted = extract_kernel(*bz, {bz_file, "vmlinuz"});
  REQUIRE_FALSE(bz_extracted.ok());
  CHECK(bz_extracted.error().message == "vmlinuz: payload is compressed with bzip2, which kpack does not read");

  std::vector<uint8_t> not_elf(1000, 0x11);
  const auto not_elf_file = make_bzimage(compress(StreamFormat::kGzip, not_elf));
  auto ne = read_bzimage({not_elf_file, "vmlinuz"});
  REQUIRE(ne.ok());
  auto ne_extracted = extract_kernel(*ne, {not_elf_file, "vmlinuz"});
  REQUIRE_FALSE(ne_extracted.ok());
  CHECK(ne_extracted.error().message == "vmlinuz: the decompressed kernel is not an ELF file");
}

TEST_CASE("elf_file_extent") {
  const auto elf_bytes = make_elf();
  auto extent = elf_file_extent({kernel_bytes(), "k"});
  REQUIRE(extent.ok());
  CHECK(*extent == kElfExtent);

  auto check_error = [](std::vector<uint8_t> bytes, const std::string& expected) {
    auto r = elf_file_extent({bytes, "k"});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == expected);
  };
  auto elf32 = elf_bytes;
  elf32[4] = 1;
  check_error(elf32, "k: the kernel ELF is not 64-bit");
  auto big_endian = elf_bytes;
  big_endian[5] = 2;
  check_error(big_endian, "k: the kernel ELF is not little-endian");
  auto arm = elf_bytes;
  arm[18] = 183;
  check_error(arm, "k: the kernel ELF is for machine 183, not x86-64");
  check_error(std::vector<uint8_t>(elf_bytes.begin(), elf_bytes.begin() + 40),
              "k: the decompressed kernel is not an ELF file");
  check_error(std::vector<uint8_t>(elf_bytes.begin(), elf_bytes.end() - 1),
              "k: the kernel ELF is truncated: it has 16575 bytes but needs 0x4000 + 192 for its section headers");

  // A segment that reaches past the data.
  auto long_segment = elf_bytes;
  elf::Phdr load;
  std::memcpy(&load, long_segment.data() + 64, sizeof(load));
  load.filesz = 0x10000;
  put(long_segment, 64, load);
  check_error(long_segment,
              "k: the kernel ELF is truncated: it has 16576 bytes but needs 0x1000 + 65536 for its segment 0");
  load.offset = ~uint64_t{0} - 4;  // offset + size overflows
  load.filesz = 0x10;
  put(long_segment, 64, load);
  check_error(long_segment,
              "k: the kernel ELF is truncated: it has 16576 bytes but needs 0xfffffffffffffffb + 16 for its segment 0");

  // A section stored after the section headers moves the end of the file.
  auto late_section = elf_bytes;
  late_section.resize(kElfExtent + 0x100, 0xAB);
  elf::Shdr extra{};
  extra.type = 1;
  extra.offset = kElfExtent;
  extra.size = 0x80;
  put(late_section, kElfShoff, extra);  // reuse slot 0 for the test
  auto late = elf_file_extent({late_section, "k"});
  REQUIRE(late.ok());
  CHECK(*late == kElfExtent + 0x80);

  auto small_phentsize = elf_bytes;
  small_phentsize[54] = 32;
  check_error(small_phentsize, "k: the kernel ELF's program header size 32 is too small");
}

TEST_CASE("[real kernel] Debian's stock bzImage: header, lz4 payload, ELF and relocations") {
  const std::string path = test::real_kernel_path();
  auto file = read_file(path);
  REQUIRE_MESSAGE(file.ok(), (file.ok() ? "" : file.error().message));
  CHECK(looks_like_bzimage(*file));
  auto image = read_bzimage({*file, path});
  REQUIRE_MESSAGE(image.ok(), (image.ok() ? "" : image.error().message));
  CHECK(image->format == StreamFormat::kLz4Legacy);
  CHECK_FALSE(image->packer_record.has_value());
  CHECK((*file)[0] == 'M');
  CHECK((*file)[1] == 'Z');

  auto kernel = extract_kernel(*image, {*file, path});
  REQUIRE_MESSAGE(kernel.ok(), (kernel.ok() ? "" : kernel.error().message));
  CHECK(kernel->elf.size() > 40'000'000);
  REQUIRE(kernel->elf.size() >= 4);
  CHECK(std::memcmp(kernel->elf.data(), elf::kMagic, 4) == 0);
  CHECK_FALSE(kernel->relocation_table.empty());
  CHECK(kernel->relocation_table.size() % 4 == 0);

  // The last payload bytes are the kernel build's size_append: the decoded size.
  const uint32_t appended = test::le32_at(*file, image->payload_offset + image->payload_size - 4);
  CHECK(appended == kernel->elf.size() + kernel->relocation_table.size());
  MESSAGE("setup " << image->setup_size << " B, payload " << image->payload_size << " B at " << image->payload_offset
                   << ", ELF " << kernel->elf.size() << " B, relocs " << kernel->relocation_table.size()
                   << " B, trailing u32 " << appended << ", file " << file->size() << " B");
}
