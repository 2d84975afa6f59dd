// Packed images, field by field against the boot protocol, and back through the reader.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "packer/input/bzimage_reader.h"
#include "formats/boot_params.h"
#include "formats/elf64.h"
#include "packer/image/image_writer.h"
#include "packer/read/info.h"
#include "packer/input/kernel_input.h"
#include "packer/input/kernel_version.h"
#include "tests/support/same_segment.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/bytes.h"
#include "tests/support/packed_image.h"
#include "tests/support/real_kernel.h"
#include "tests/support/temp_dir.h"
#include "packer/image/layout.h"
#include "stub/unpack/kernel_headers.h"

using namespace kpack;

namespace {

// With a (one-entry) relocation table, as stock images carry.
KernelInput synthetic_input() {
  KernelInput input = test::synthetic_input();
  input.relocation_table = {1, 0, 0, 0, 0, 0, 0, 0};
  return input;
}

std::vector<uint8_t> pack(const KernelInput& input, Codec codec, RawLayout layout = RawLayout::kInPlace) {
  return test::pack_image(input, codec, 3, layout);
}

}  // namespace

TEST_CASE("a kernel with 5-level paging gets XLF_5LEVEL_ENABLED and the record's bit") {
  KernelInput input = synthetic_input();
  input.five_level_paging = true;
  for (Codec codec : {Codec::kRaw, Codec::kLz4}) {
    CAPTURE(codec_name(codec));
    std::vector<uint8_t> image = pack(input, codec);
    uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
    CHECK(test::get<uint16_t>(image, 0x236) == 0x006B);
    PackerRecord info = test::get<PackerRecord>(image, setup_size + built_in_blobs(codec).stub.size());
    CHECK(info.flags == (kRecordKernelFiveLevel | (codec == Codec::kRaw ? 0 : kRecordRelocationPlanes)));
  }
}

TEST_CASE("a kernel that accepts memory itself gets the record's bit, and kpack info says so") {
  KernelInput input = synthetic_input();
  CHECK_FALSE(input.accepts_memory);  // the synthetic kernel holds no unaccepted memory table GUID
  for (bool accepts : {false, true}) {
    CAPTURE(accepts);
    input.accepts_memory = accepts;
    std::vector<uint8_t> image = pack(input, Codec::kLz4);
    uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
    PackerRecord info = test::get<PackerRecord>(image, setup_size + built_in_blobs(Codec::kLz4).stub.size());
    CHECK(info.flags == ((accepts ? kRecordKernelAcceptsMemory : 0u) | kRecordRelocationPlanes));
    std::string printed = test::printed_by([&](std::FILE* out) {
      REQUIRE(print_image_info({image, "out.img"}, out).ok());
    });
    CHECK(printed.find(accepts ? "efi: unaccepted memory left to the kernel, which accepts memory itself\n"
                               : "efi: unaccepted memory accepted by the firmware at ExitBootServices\n") !=
          std::string::npos);
  }
}

TEST_CASE("the packer finds the unaccepted memory table's GUID anywhere in the kernel, and only it") {
  // d5d1de3c-105c-44f9-9ea9-bcef98120031 as it lies in memory (EFI_GUID's little-endian fields).
  const std::vector<uint8_t> guid = {0x3C, 0xDE, 0xD1, 0xD5, 0x5C, 0x10, 0xF9, 0x44,
                                     0x9E, 0xA9, 0xBC, 0xEF, 0x98, 0x12, 0x00, 0x31};
  std::vector<uint8_t> elf(4096, 0xCC);
  CHECK_FALSE(kernel_accepts_memory(elf));
  std::copy(guid.begin(), guid.end(), elf.begin() + 1001);
  CHECK(kernel_accepts_memory(elf));
  elf[1001 + 15] = 0x30;  // one byte off
  CHECK_FALSE(kernel_accepts_memory(elf));
  std::copy(guid.begin(), guid.end(), elf.end() - 16);
  CHECK(kernel_accepts_memory(elf));
}

TEST_CASE("[real kernel] Debian's 6.1 kernel does not accept memory itself, its 6.12 cloud kernel does") {
  Result<KernelInput> old_kernel = load_kernel(Context{.input = test::real_kernel_path()});
  REQUIRE_MESSAGE(old_kernel.ok(), (old_kernel.ok() ? "" : old_kernel.error().message));
  CHECK_FALSE(old_kernel->accepts_memory);
  Result<KernelInput> new_kernel = load_kernel(Context{.input = test::real_kernel_path("6.12")});
  REQUIRE_MESSAGE(new_kernel.ok(), (new_kernel.ok() ? "" : new_kernel.error().message));
  CHECK(new_kernel->accepts_memory);  // its config: CONFIG_UNACCEPTED_MEMORY=y
}

TEST_CASE("[real kernel] Debian's 6.1 .bss and .brk reach the record, and a repack keeps them") {
  // From the stock bzImage's ELF (objcopy -S keeps section headers): .bss at 0xffffffff832b1000
  // (0x54f000 bytes), .brk right after it (0x30000), 0x22b1000 into the kernel from 16 MiB.
  Result<KernelInput> input = load_kernel(Context{.input = test::real_kernel_path()});
  REQUIRE_MESSAGE(input.ok(), (input.ok() ? "" : input.error().message));
  CHECK(input->cleared_by_kernel.begin == 0x22b1000);
  CHECK(input->cleared_by_kernel.end == 0x22b1000 + 0x54f000 + 0x30000);
  test::TempDir dir;
  for (Codec codec : {Codec::kRaw, Codec::kLz4}) {
    CAPTURE(codec_name(codec));
    std::vector<uint8_t> image = pack(*input, codec);
    uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
    uint32_t kernel_info = test::get<uint32_t>(image, 0x268);
    PackerRecord record = test::get<PackerRecord>(image, setup_size + kernel_info - sizeof(PackerRecord));
    CHECK(record.bss_page == 0x22b1);
    CHECK(record.bss_pages == (0x54f000 + 0x30000) / 4096);
    // Repacking reads them back from the record; the vmlinux `kpack extract` writes has no section
    // headers to say, and its image zeroes the whole tail.
    Result<KernelInput> repacked = load_kernel(Context{.input = dir.write("kpack.bzImage", image)});
    REQUIRE(repacked.ok());
    CHECK(repacked->cleared_by_kernel.begin == input->cleared_by_kernel.begin);
    CHECK(repacked->cleared_by_kernel.end == input->cleared_by_kernel.end);
    Result<KernelInput> extracted = load_kernel(Context{.input = dir.write("vmlinux", repacked->elf)});
    REQUIRE(extracted.ok());
    CHECK(extracted->cleared_by_kernel.empty());
  }
}

TEST_CASE("the setup header of a packed image follows boot protocol 2.15") {
  KernelInput input = synthetic_input();
  for (Codec codec : {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    CAPTURE(codec_name(codec));
    ImageBlobs blobs = built_in_blobs(codec);
    std::vector<uint8_t> image = pack(input, codec);
    // Raw bytes at the documented offsets, not through our own struct.
    uint8_t setup_sects = image[0x1F1];
    uint64_t setup_size = (setup_sects + 1) * 512ull;
    // The setup blob, then padding to a page (the synthetic kernel has no version string).
    CHECK(setup_size == (blobs.setup.size() + 4095) / 4096 * 4096);
    CHECK(test::get<uint16_t>(image, 0x1FE) == 0xAA55);
    CHECK(image[0x200] == 0xEB);
    CHECK(0x202 + image[0x201] == 0x26C);  // the jump lands right after the 2.15 header
    CHECK(std::memcmp(image.data() + 0x202, "HdrS", 4) == 0);
    CHECK(test::get<uint16_t>(image, 0x206) == 0x020F);
    CHECK(image[0x211] == 0x01);  // LOADED_HIGH only: no KASLR, no heap claims
    CHECK(test::get<uint32_t>(image, 0x214) == 0x100000);
    CHECK(test::get<uint32_t>(image, 0x230) == 0x200000);
    CHECK(image[0x234] == 1);
    CHECK(image[0x235] == 12);
    // XLF_KERNEL_64, CAN_BE_LOADED_ABOVE_4G (the stub maps windows above 4 GiB), EFI_HANDOVER_64
    // (the stub's handover entry) and 5LEVEL (the 64-bit entry takes a CPU in 5-level mode), but
    // not 5LEVEL_ENABLED: the synthetic kernel has no __pgtable_l5_enabled. Nothing untrue.
    CHECK(test::get<uint16_t>(image, 0x236) == 0x002B);
    CHECK(test::get<uint32_t>(image, 0x264) + 0x200 == test::get<uint32_t>(blobs.stub, kStubLayoutOffset + 20));
    CHECK(test::get<uint16_t>(image, 0x1F2) == 1);       // root_flags: read-only root, as stock
    CHECK(test::get<uint16_t>(image, 0x1FA) == 0xFFFF);  // vid_mode: "normal", as stock
    CHECK(test::get<uint32_t>(image, 0x238) == 2047);
    // pref_address: 1 MiB, where QEMU -kernel loads whatever it says; raw's default layout
    // (in-place) puts the kernel's first segment 15 MiB into the protected-mode part for it.
    CHECK(test::get<uint64_t>(image, 0x258) == 0x100000);
    // The file ends on a 512-byte block (PE file alignment) past the protected-mode part.
    uint64_t protected_size = test::get<uint64_t>(image, setup_size + blobs.stub.size() + 32);  // the record's
    CHECK(image.size() - setup_size == (protected_size + 511) / 512 * 512);
    CHECK(test::get<uint32_t>(image, 0x1F4) == (protected_size + 15) / 16);
    uint32_t payload_offset = test::get<uint32_t>(image, 0x248);
    uint32_t payload_length = test::get<uint32_t>(image, 0x24C);
    CHECK(payload_offset % (codec == Codec::kRaw ? 4096 : 16) == 0);
    CHECK(payload_offset + uint64_t{payload_length} == protected_size);
    CHECK(test::get<uint32_t>(image, 0x260) >= protected_size);
    CHECK(test::get<uint32_t>(image, 0x260) % 4096 == 0);
    // The setup code itself is untouched around the header.
    CHECK(std::memcmp(image.data() + 0x26C, blobs.setup.data() + 0x26C, blobs.setup.size() - 0x26C) == 0);
    CHECK(std::memcmp(image.data() + setup_size, blobs.stub.data(), blobs.stub.size()) == 0);

    // kernel_info and the kpack record right after the stub.
    uint32_t kernel_info = test::get<uint32_t>(image, 0x268);
    CHECK(kernel_info == blobs.stub.size() + sizeof(PackerRecord));
    CHECK(std::memcmp(image.data() + setup_size + kernel_info, "LToP", 4) == 0);
    CHECK(test::get<uint32_t>(image, setup_size + kernel_info + 4) == 16);
    PackerRecord info = test::get<PackerRecord>(image, setup_size + blobs.stub.size());
    CHECK(std::memcmp(info.magic, "kpackINF", 8) == 0);
    CHECK(info.version == 5);
    CHECK(info.codec == static_cast<uint32_t>(codec));
    CHECK(info.payload_offset == payload_offset);
    CHECK(info.payload_size == payload_length);
    CHECK(info.image_size == protected_size);
    CHECK(info.min_kernel_address == input.kernel.physical.begin);  // the link address: 16 MiB
    CHECK(info.kernel_alignment == 0x200000);
    CHECK(info.relocations_size == input.relocation_table.size());
    CHECK(!input.relocation_table.empty());
    CHECK(info.flags == (codec == Codec::kRaw ? 0 : kRecordRelocationPlanes));  // compressed: the table coded
    CHECK(info.digest == static_cast<uint32_t>(digest_for(codec)));
    CHECK(info.bss_page == 0);  // the synthetic kernel has no .bss section
    CHECK(info.bss_pages == 0);
    // The frame table right after kernel_info, the payload after it (16-byte aligned).
    if (codec == Codec::kRaw) {
      CHECK(info.frame_count == 0);
      CHECK(info.frame_table_offset == 0);
    } else {
      CHECK(info.frame_table_offset == kernel_info + 16);
      CHECK(info.frame_count >= 2);
      CHECK(payload_offset == align_up(info.frame_table_offset + info.frame_count * sizeof(FrameEntry), 16));
      FrameEntry first = test::get<FrameEntry>(image, setup_size + info.frame_table_offset);
      CHECK(first.payload_offset == 0);
      CHECK(first.file_offset == 0);
      FrameEntry last = test::get<FrameEntry>(
          image, setup_size + info.frame_table_offset + (info.frame_count - 1) * sizeof(FrameEntry));
      CHECK(last.payload_offset + last.payload_size == payload_length);
    }
  }
}

TEST_CASE("payloads start with the codec's standard frame magic") {
  KernelInput input = synthetic_input();
  const std::pair<Codec, std::vector<uint8_t>> magics[] = {
      {Codec::kRaw, {0x7F, 'E', 'L', 'F'}},
      {Codec::kGzip, {0x1F, 0x8B, 0x08}},
      {Codec::kLz4, {0x04, 0x22, 0x4D, 0x18}},
      {Codec::kZstd, {0x28, 0xB5, 0x2F, 0xFD}},
  };
  for (const auto& [codec, magic] : magics) {
    std::vector<uint8_t> image = pack(input, codec);
    uint64_t payload = (image[0x1F1] + 1) * 512ull + test::get<uint32_t>(image, 0x248);
    CHECK(std::equal(magic.begin(), magic.end(), image.begin() + payload));
  }
}

TEST_CASE("a raw image in place mirrors physical memory: loaded at 1 MiB, each segment sits at its link address") {
  KernelInput input = synthetic_input();
  std::vector<uint8_t> image = pack(input, Codec::kRaw);
  CHECK(image == pack(input, Codec::kRaw, RawLayout::kInPlace));  // the default layout
  uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
  uint64_t payload_offset = test::get<uint32_t>(image, 0x248);
  const KernelHeaders& k = input.kernel;
  // The header a loader reads: the part goes at 1 MiB, on 2 MiB kernel_alignment (the kernel's),
  // and takes the first segment's 15 MiB offset plus the kernel's whole span, bss included.
  CHECK(test::get<uint64_t>(image, 0x258) == 0x100000);             // pref_address
  CHECK(test::get<uint32_t>(image, 0x230) == 0x200000);             // kernel_alignment
  CHECK(test::get<uint32_t>(image, 0x260) == 0xF00000 + 0x214000);  // init_size
  CHECK(k.span() == 0x214000);
  // Each segment at its link address minus 1 MiB into the protected-mode part: file offsets
  // 0xF00000, 0x1100000, 0x1109000, 0x110B000 (payload-relative: minus payload_offset).
  const uint64_t offsets[] = {0xF00000, 0x1100000, 0x1109000, 0x110B000};
  KernelHeaders packed;
  uint64_t payload = setup_size + payload_offset;
  REQUIRE(parse_kernel_headers(image.data() + payload, image.size() - payload, image.size() - payload, &packed).ok());
  REQUIRE(packed.segment_count == 4);
  CHECK(mirrors_physical(packed));
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    CHECK(packed.segments[i].offset + payload_offset == offsets[i]);
    CHECK(0x100000 + offsets[i] == s.paddr);
    CHECK(std::equal(input.elf.begin() + s.offset, input.elf.begin() + s.offset + s.filesz,
                     image.begin() + setup_size + offsets[i]));
  }
  // Zeros between the ELF headers' page and the kernel (a hole on disk, in no PE section), and
  // between the first segment's end (0xF23000) and the second.
  CHECK(std::all_of(image.begin() + payload + 0x1000, image.begin() + setup_size + offsets[0],
                    [](uint8_t b) { return b == 0; }));
  // The file ends with the last segment's file bytes, then the relocation table; the last
  // segment's 0x3000 bytes of bss are the stub's to zero, inside init_size. Segments before it
  // keep their zeros (p_filesz = p_memsz), since the next one's bytes follow in the file anyway.
  const uint64_t kernel_file_end = 0x110B000 + 0x6000;
  CHECK(image.size() - setup_size == align_up(kernel_file_end + input.relocation_table.size(), 512));
  CHECK(std::equal(input.relocation_table.begin(), input.relocation_table.end(),
                   image.begin() + setup_size + kernel_file_end));
  CHECK(packed.segments[0].filesz == 0x23000);
  CHECK(packed.segments[3].filesz == 0x6000);
  CHECK(packed.segments[3].memsz == 0x9000);
  CHECK(packed.segments[2].filesz == 0x2000);
  std::string info = test::printed_by([&](std::FILE* out) { CHECK(print_image_info({image, "out.img"}, out).ok()); });
  CHECK(info.find("layout: in-place (--layout in-place: loaded at 1 MiB") != std::string::npos);
}

TEST_CASE("a raw image in place with --kernel-address 2 MiB: its first segment 1 MiB into the part") {
  KernelInput input = synthetic_input();
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  options.kernel_address = 0x200000;
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
  REQUIRE(image.ok());
  uint64_t setup_size = ((*image)[0x1F1] + 1) * 512ull;
  CHECK(test::get<uint64_t>(*image, 0x258) == 0x100000);
  CHECK(test::get<uint32_t>(*image, 0x260) == 0x100000 + 0x214000);
  const LoadSegment& s = input.kernel.segments[0];
  CHECK(std::equal(input.elf.begin() + s.offset, input.elf.begin() + s.offset + s.filesz,
                   image->begin() + setup_size + 0x100000));
}

TEST_CASE(
    "a raw image laid out compact is the compact ELF; loaded at pref_address, its first segment sits at its "
    "link address") {
  KernelInput input = synthetic_input();
  std::vector<uint8_t> image = pack(input, Codec::kRaw, RawLayout::kCompact);
  uint64_t setup_size = (image[0x1F1] + 1) * 512ull;
  uint64_t payload_offset = test::get<uint32_t>(image, 0x248);
  const KernelHeaders& k = input.kernel;
  // Each segment on the page after the last one's bytes (no zeros between them), the first one a
  // page into the payload, after the ELF headers.
  const uint64_t offsets[] = {0x1000, 0x24000, 0x2D000, 0x2F000};
  KernelHeaders packed;
  uint64_t payload = setup_size + payload_offset;
  REQUIRE(parse_kernel_headers(image.data() + payload, image.size() - payload, image.size() - payload, &packed).ok());
  REQUIRE(packed.segment_count == 4);
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    CHECK(packed.segments[i].offset == offsets[i]);
    CHECK(std::equal(input.elf.begin() + s.offset, input.elf.begin() + s.offset + s.filesz,
                     image.begin() + payload + offsets[i]));
  }
  CHECK(test::get<uint64_t>(image, 0x258) + payload_offset + 0x1000 == k.physical.begin);
  CHECK(test::get<uint64_t>(image, 0x258) == 0x1000000 - payload_offset - 0x1000);  // pref_address
  CHECK(test::get<uint32_t>(image, 0x230) == 0x200000);                             // kernel_alignment
  // The file ends with the last segment's file bytes (its last one is not zero), then the
  // relocation table; the segment's 0x3000 bytes of bss are the stub's to zero, inside init_size.
  const uint64_t kernel_file_end = payload_offset + 0x2F000 + 0x6000;
  CHECK(image.size() - setup_size == align_up(kernel_file_end + input.relocation_table.size(), 512));
  CHECK(std::equal(input.relocation_table.begin(), input.relocation_table.end(),
                   image.begin() + setup_size + kernel_file_end));
  CHECK(test::get<uint32_t>(image, 0x260) == payload_offset + 0x1000 + k.span());  // init_size
  CHECK(packed.segments[3].filesz == 0x6000);
  CHECK(packed.segments[3].memsz == 0x9000);
  CHECK(packed.segments[2].filesz == 0x2000);
  std::string info = test::printed_by([&](std::FILE* out) { CHECK(print_image_info({image, "out.img"}, out).ok()); });
  CHECK(info.find("layout: compact (--layout compact: no zeros before or between the segments") != std::string::npos);
  char pref[64];
  std::snprintf(pref, sizeof pref, "pref_address 0x%llx)", 0x1000000ull - payload_offset - 0x1000);
  CHECK(info.find(pref) != std::string::npos);
}

TEST_CASE("extract gives back the kernel of a packed image, for every codec") {
  KernelInput input = synthetic_input();
  for (Codec codec : {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    CAPTURE(codec_name(codec));
    std::vector<uint8_t> image = pack(input, codec);
    Result<BzImage> read = read_bzimage({image, "out.img"});
    REQUIRE_MESSAGE(read.ok(), read.error().message);
    REQUIRE(read->packer_record.has_value());
    Result<KernelPayload> payload = extract_kernel(*read, {image, "out.img"});
    REQUIRE_MESSAGE(payload.ok(), payload.error().message);
    CHECK(payload->relocation_table == input.relocation_table);
    Result<KernelHeaders> k = parse_vmlinux({payload->elf, "extracted"});
    REQUIRE(k.ok());
    REQUIRE(k->segment_count == input.kernel.segment_count);
    CHECK(k->entry == input.kernel.entry);
    for (uint32_t i = 0; i < k->segment_count; ++i) {
      CHECK_MESSAGE(test::same_segment(input.elf, input.kernel.segments[i], payload->elf, k->segments[i]),
                    "segment " << i);
    }
    // The PT_NOTE (Xen's PVH entry lives there) still points at the same bytes.
    const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(payload->elf.data());
    bool note_found = false;
    for (uint32_t i = 0; i < ehdr.phnum; ++i) {
      const auto& p = *reinterpret_cast<const elf::Phdr*>(payload->elf.data() + ehdr.phoff + i * sizeof(elf::Phdr));
      if (p.type != elf::kPtNote) continue;
      note_found = true;
      CHECK(std::equal(input.elf.begin() + 0x1000, input.elf.begin() + 0x1010, payload->elf.begin() + p.offset));
    }
    CHECK(note_found);
    // Packing what was extracted gives the same image again.
    KernelInput again;
    again.elf = payload->elf;
    again.relocation_table = payload->relocation_table;
    again.kernel = *k;
    CHECK(pack(again, codec) == image);
  }
}

TEST_CASE("a compact raw kernel whose floor lies below its first segment at 1 MiB keeps pref_address at 1 MiB") {
  KernelInput input = synthetic_input();
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  options.raw_layout = RawLayout::kCompact;
  options.kernel_address = 0x100000;
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
  REQUIRE(image.ok());
  CHECK(test::get<uint64_t>(*image, 0x258) == 0x100000);
  // In place, the kernel would have to start where the stub does: refused.
  options.raw_layout = RawLayout::kInPlace;
  image = build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
  REQUIRE_FALSE(image.ok());
  CHECK(image.error().message == "out.img: raw layout: kernel address leaves no room for the stub below it");
}

TEST_CASE("the kernel's version string goes where the header's kernel_version points") {
  KernelInput input = synthetic_input();
  // Two banners, as Debian's 6.1 has: the one printed at boot carries the build number.
  const char early[] = "Linux version 6.1.0-test (me@host) (gcc (Debian 12) 12.2.0, GNU ld 2.40) # SMP Debian 1.2.3\n";
  const char booted[] =
      "Linux version 6.1.0-test (me@host) (gcc (Debian 12) 12.2.0, GNU ld 2.40) #7 SMP Debian 1.2.3\n";
  const LoadSegment& data = input.kernel.segments[1];
  std::memcpy(input.elf.data() + data.offset + 0x100, early, sizeof(early));
  std::memcpy(input.elf.data() + data.offset + 0x400, booted, sizeof(booted));
  KernelInput loaded = input;
  loaded.version = version_from_banner(loaded.elf);
  REQUIRE(loaded.version.has_value());
  CHECK(*loaded.version == "6.1.0-test (me@host) #7 SMP Debian 1.2.3");

  std::vector<uint8_t> image = pack(loaded, Codec::kLz4);
  uint16_t kernel_version = test::get<uint16_t>(image, 0x20E);
  CHECK(kernel_version == built_in_blobs(Codec::kLz4).setup.size() - 0x200);
  // One more sector for the string, then padding to a page (the protected-mode part's PE section).
  CHECK(image[0x1F1] == (built_in_blobs(Codec::kLz4).setup.size() + 512 + 4095) / 4096 * 4096 / 512 - 1);
  CHECK(std::string(reinterpret_cast<const char*>(image.data() + 0x200 + kernel_version)) ==
        "6.1.0-test (me@host) #7 SMP Debian 1.2.3");
  Result<BzImage> read = read_bzimage({image, "out.img"});
  REQUIRE(read.ok());
  CHECK(version_from_bzimage(image, read->header, read->setup_size) == loaded.version);
}

TEST_CASE("version strings that are not there or not text are ignored") {
  CHECK_FALSE(version_from_banner(std::vector<uint8_t>(100, 0)).has_value());
  const char unbalanced[] = "Linux version 6.1 (me@host (gcc #1\n";
  CHECK_FALSE(version_from_banner(std::span(reinterpret_cast<const uint8_t*>(unbalanced), sizeof(unbalanced))));
  std::vector<uint8_t> file(0x1000, 0);
  boot::SetupHeader header{};
  header.version = 0x020F;
  header.kernel_version = 0x0F00;  // past the setup sectors
  CHECK_FALSE(version_from_bzimage(file, header, 0x800).has_value());
  header.kernel_version = 0x100;
  file[0x300] = 0x01;  // not printable
  CHECK_FALSE(version_from_bzimage(file, header, 0x800).has_value());
}

// packer/image/image_writer.cc, build_payload: a raw image stores the kernel's whole physical span. A
// valid ELF with two small segments 3.7 GiB apart made `kpack --raw` allocate and zero that much,
// dying of std::bad_alloc (SIGABRT) under any memory limit. It is now refused up front.
TEST_CASE("regression: a raw image of a kernel spanning 3.7 GiB is refused, not allocated") {
  Result<KernelInput> input = kernel_input_from_elf(
      test::make_kernel_elf({{0x1000000, 0x1000, 0x1000}, {0xF0000000, 0x1000, 0x1000}}), "huge.elf");
  REQUIRE(input.ok());
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  Result<std::vector<uint8_t>> image = build_image(Context{.input = "huge.elf", .output = "out.img"}, *input, options,
                                                   built_in_blobs(options.compress.codec));
  REQUIRE_FALSE(image.ok());
  // The kernel's layout is at fault: the message names the kernel, not the image it would have made.
  CHECK(image.error().message.starts_with("huge.elf: raw layout: the kernel's segments span "));
}

// packer/image/layout.cc, rewrite: program headers were matched to their new place by file offset and
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

// stub/unpack/kernel_headers.cc, parse_kernel_headers (found by fuzz_elf in an hour-long run): the
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

// A synthetic kernel whose 256 KiB text segment holds two runs of zero pages: 16 pages at 0x10000
// (long enough to leave out) and 15 at 0x28000 (too short).
KernelInput kernel_with_zero_runs() {
  std::vector<uint8_t> elf = test::make_kernel_elf(
      {{0x1000000, 0x40000, 0x40000, elf::kPfR | elf::kPfX}, {0x1200000, 0x9000, 0x9000, elf::kPfR | elf::kPfW}});
  const auto* phdrs = reinterpret_cast<const elf::Phdr*>(elf.data() + sizeof(elf::Ehdr));
  uint64_t text = phdrs[0].offset;
  std::fill(elf.begin() + static_cast<long>(text + 0x10000), elf.begin() + static_cast<long>(text + 0x20000), 0);
  std::fill(elf.begin() + static_cast<long>(text + 0x28000), elf.begin() + static_cast<long>(text + 0x37000), 0);
  Result<KernelInput> input = kernel_input_from_elf(elf, "zeros.elf");
  REQUIRE(input.ok());
  return *input;
}

TEST_CASE("a raw payload leaves out 16 zero pages or more inside a segment: two PT_LOADs, the first ending in bss") {
  KernelInput input = kernel_with_zero_runs();
  const LoadSegment& text = input.kernel.segments[0];
  CHECK(layout_compact(input).kernel.segment_count == 2);  // compressed payloads store them
  PayloadElf out = layout_compact(input, InnerZeros::kLeftOut);
  REQUIRE(out.kernel.segment_count == 3);
  const LoadSegment &head = out.kernel.segments[0], &rest = out.kernel.segments[1], &data = out.kernel.segments[2];
  CHECK(head.paddr == 0x1000000);
  CHECK(head.vaddr == 0xffffffff81000000);
  CHECK(head.offset == 0x1000);
  CHECK(head.filesz == 0x10000);
  CHECK(head.memsz == 0x20000);
  CHECK(head.align == 0x200000);
  CHECK(rest.paddr == 0x1020000);
  CHECK(rest.vaddr == 0xffffffff81020000);
  CHECK(rest.offset == 0x11000);  // right after the head's bytes: the 64 KiB of zeros are not in the file
  CHECK(rest.filesz == 0x20000);  // the 15-page run stays
  CHECK(rest.memsz == 0x20000);
  CHECK(rest.align == 0x1000);
  CHECK(rest.flags == (elf::kPfR | elf::kPfX));
  CHECK(data.offset == 0x31000);
  CHECK(out.bytes.size() == 0x31000 + 0x9000);
  CHECK(std::equal(input.elf.begin() + static_cast<long>(text.offset),
                   input.elf.begin() + static_cast<long>(text.offset + 0x10000), out.bytes.begin() + 0x1000));
  CHECK(std::equal(input.elf.begin() + static_cast<long>(text.offset + 0x20000),
                   input.elf.begin() + static_cast<long>(text.offset + 0x40000), out.bytes.begin() + 0x11000));
  CHECK(out.kernel.physical.begin == input.kernel.physical.begin);
  CHECK(out.kernel.physical.end == input.kernel.physical.end);
  CHECK(is_physically_ordered(out.kernel));
  // Three PT_LOADs and the PT_NOTE.
  const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(out.bytes.data());
  CHECK(ehdr.phnum == 4);
}

TEST_CASE("a zero run that a relocation patches stays in a raw payload") {
  KernelInput input = kernel_with_zero_runs();
  // 0 | 64-bit list: 0x81018000 (physical 0x1018000, inside the run) | 0 | 32-bit list: empty.
  input.relocation_table = {0, 0, 0, 0, 0x00, 0x80, 0x01, 0x81, 0, 0, 0, 0};
  CHECK(layout_compact(input, InnerZeros::kLeftOut).kernel.segment_count == 2);
  input.relocation_table = {0, 0, 0, 0, 0x00, 0x80, 0x02, 0x81, 0, 0, 0, 0};  // physical 0x1028000: outside it
  CHECK(layout_compact(input, InnerZeros::kLeftOut).kernel.segment_count == 3);
}

TEST_CASE("a raw payload leaves out the longest zero runs that keep it within the stub's segment limit") {
  // A 2 MiB text segment with 20 runs of zero pages, 16 pages each but the last (17): 14 runs fit
  // beside the two segments, the longest first and, among equals, the first in the file.
  std::vector<uint8_t> elf = test::make_kernel_elf(
      {{0x1000000, 0x200000, 0x200000, elf::kPfR | elf::kPfX}, {0x1200000, 0x9000, 0x9000, elf::kPfR | elf::kPfW}});
  const auto* phdrs = reinterpret_cast<const elf::Phdr*>(elf.data() + sizeof(elf::Ehdr));
  uint64_t text = phdrs[0].offset;
  for (uint64_t run = 0; run < 20; ++run) {
    uint64_t at = text + 0x1000 + run * 0x18000;
    uint64_t pages = run == 19 ? 17 : 16;  // the last run is the longest: it is left out whatever its place
    std::fill(elf.begin() + static_cast<long>(at), elf.begin() + static_cast<long>(at + pages * 0x1000), 0);
  }
  Result<KernelInput> input = kernel_input_from_elf(elf, "runs.elf");
  REQUIRE(input.ok());
  PayloadElf out = layout_compact(*input, InnerZeros::kLeftOut);
  REQUIRE(out.kernel.segment_count == kMaxLoadSegments);
  // The pieces of the text: the one before the first run, then one after each of runs 0-12, then the
  // one after run 19 (the 17-page run outranks the 16-page runs 13-18, which stay in the file).
  CHECK(out.kernel.segments[0].memsz == 0x11000);
  CHECK(out.kernel.segments[13].paddr == 0x1000000 + 0x1000 + 12 * 0x18000 + 0x10000);
  CHECK(out.kernel.segments[14].paddr == 0x1000000 + 0x1000 + 19 * 0x18000 + 0x11000);
  CHECK(out.kernel.segments[13].memsz == out.kernel.segments[14].paddr - out.kernel.segments[13].paddr);
  CHECK(out.kernel.segments[13].filesz == 19 * 0x18000 - 12 * 0x18000 - 0x10000);
}

// One 2 MiB text segment with 20 runs of 16 zero pages, and PHNUM program headers (the ones past
// the PT_LOAD and the PT_NOTE empty: PT_NULL).
KernelInput kernel_with_headers(uint16_t phnum) {
  std::vector<uint8_t> elf = test::make_kernel_elf({{0x1000000, 0x200000, 0x200000, elf::kPfR | elf::kPfX}});
  const auto* phdrs = reinterpret_cast<const elf::Phdr*>(elf.data() + sizeof(elf::Ehdr));
  uint64_t text = phdrs[0].offset;
  for (uint64_t run = 0; run < 20; ++run) {
    uint64_t at = text + 0x1000 + run * 0x18000;
    std::fill(elf.begin() + static_cast<long>(at), elf.begin() + static_cast<long>(at + 0x10000), 0);
  }
  reinterpret_cast<elf::Ehdr*>(elf.data())->phnum = phnum;
  Result<KernelInput> input = kernel_input_from_elf(elf, "headers.elf");
  REQUIRE(input.ok());
  return *input;
}

TEST_CASE("a raw payload leaves out no more zero runs than the program header table can list") {
  // 64 headers, the most the stub reads: no room for a piece's header, so every zero stays (the
  // rewrite once listed 79 and trapped on its own output).
  PayloadElf full = layout_compact(kernel_with_headers(kMaxProgramHeaders), InnerZeros::kLeftOut);
  CHECK(full.kernel.segment_count == 1);
  CHECK(reinterpret_cast<const elf::Ehdr*>(full.bytes.data())->phnum == kMaxProgramHeaders);
  // 58 headers: room for 6 pieces after the first, the first 6 runs (all 16 pages: file order).
  PayloadElf some = layout_compact(kernel_with_headers(58), InnerZeros::kLeftOut);
  REQUIRE(some.kernel.segment_count == 7);
  CHECK(reinterpret_cast<const elf::Ehdr*>(some.bytes.data())->phnum == kMaxProgramHeaders);
  CHECK(some.kernel.headers_end <= some.kernel.segments[0].offset);
  CHECK(some.kernel.segments[6].paddr == 0x1000000 + 0x1000 + 5 * 0x18000 + 0x10000);
  // Through a whole image, which reads back.
  std::vector<uint8_t> image = pack(kernel_with_headers(kMaxProgramHeaders), Codec::kRaw, RawLayout::kCompact);
  CHECK(read_bzimage({image, "headers.img"}).ok());
}

TEST_CASE("kpack extract joins a raw payload's pieces again: the ELF a compressed payload stores, byte for byte") {
  KernelInput input = kernel_with_zero_runs();
  std::vector<uint8_t> stored = layout_compact(input).bytes;
  std::vector<uint8_t> left_out = layout_compact(input, InnerZeros::kLeftOut).bytes;
  REQUIRE(left_out.size() == stored.size() - 0x10000);
  CHECK(join_left_out_zeros(left_out, kMaxDecodedBytes) == stored);
  CHECK(join_left_out_zeros(stored, kMaxDecodedBytes) == stored);       // nothing to join
  CHECK(join_left_out_zeros(left_out, stored.size() - 1) == left_out);  // over the bound: as it was
  // Through a packed image.
  std::vector<uint8_t> image = pack(input, Codec::kRaw, RawLayout::kCompact);
  Result<BzImage> read = read_bzimage({image, "zeros.img"});
  REQUIRE(read.ok());
  Result<KernelPayload> payload = extract_kernel(*read, {image, "zeros.img"});
  REQUIRE(payload.ok());
  CHECK(payload->elf == stored);
  // kpack info shows the joined segments and says what the file leaves out.
  std::string info = test::printed_by([&](std::FILE* out) {
    REQUIRE(print_image_info({image, "zeros.img"}, out).ok());
  });
  CHECK(info.find("raw: 65536 bytes of zero pages in 1 run left out of the file (the stub zeroes them)\n") !=
        std::string::npos);
  CHECK(info.find("segments (2)") != std::string::npos);
}
