// kpack --elf: the header page byte by byte, where each codec's image is loaded and why, and the file
// read back (info, extract, repacking) or refused in one line when damaged.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "formats/elf64.h"
#include "formats/kpack_elf.h"
#include "packer/input/bzimage_reader.h"
#include "packer/input/elf_reader.h"
#include "packer/image/elf_writer.h"
#include "packer/read/info.h"
#include "packer/image/pe_headers.h"
#include "packer/input/kernel_input.h"
#include "packer/image/layout.h"
#include "tests/support/bytes.h"
#include "tests/support/elf_image.h"
#include "tests/support/packed_image.h"
#include "tests/support/same_segment.h"
#include "tests/support/vmm_elf_rules.h"

using namespace kpack;

namespace {

constexpr Codec kCodecs[] = {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz};

KernelInput synthetic_input() {
  KernelInput input = test::synthetic_input();
  input.relocation_table = {1, 0, 0, 0, 0, 0, 0, 0};
  return input;
}

// The protected-mode part the bzImage of the same input carries after its setup sectors.
std::vector<uint8_t> bzimage_protected_part(const KernelInput& input, Codec codec) {
  PackOptions options = test::options_for(codec);
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "out.img"}, input, options, test::stand_in_blobs());
  REQUIRE(image.ok());
  Result<BzImage> read = read_bzimage({*image, "out.img"});
  REQUIRE(read.ok());
  const uint64_t size = read->packer_record->image_size;
  return {image->begin() + static_cast<ptrdiff_t>(read->setup_size),
          image->begin() + static_cast<ptrdiff_t>(read->setup_size + size)};
}

// A raw ELF's part: laid out in place right after the stub, bss stored (RawLayout::kInPlaceAfterStub),
// which no bzImage is.
std::vector<uint8_t> raw_elf_protected_part(const KernelInput& input) {
  PackOptions options = test::options_for(Codec::kRaw);
  options.raw_layout = RawLayout::kInPlaceAfterStub;
  Result<ProtectedPart> part =
      build_protected_part(Context{.output = "out.elf"}, input, options, test::stand_in_blobs());
  REQUIRE(part.ok());
  return part->bytes;
}

template <typename T>
T at(const std::vector<uint8_t>& bytes, uint64_t offset) {
  return test::get<T>(bytes, offset);
}

}  // namespace

TEST_CASE("the ELF header page, byte by byte") {
  KernelInput input = synthetic_input();
  ElfImage elf = test::pack_elf(input, Codec::kLz4);
  const std::vector<uint8_t>& f = elf.bytes;
  // A compressed image below the kernel's floor (16 MiB): at 2 MiB + 4 KiB, file offset 4 KiB.
  CHECK(elf.load.address == 0x201000);
  CHECK(elf.load.file_offset == 0x1000);
  CHECK(elf.load.placement == ElfPlacement::kBelowFloor);
  const uint8_t ident[16] = {0x7F, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(std::memcmp(f.data(), ident, sizeof(ident)) == 0);
  CHECK(at<uint16_t>(f, 16) == 2);         // ET_EXEC
  CHECK(at<uint16_t>(f, 18) == 62);        // EM_X86_64
  CHECK(at<uint32_t>(f, 20) == 1);         // EV_CURRENT
  CHECK(at<uint64_t>(f, 24) == 0x201200);  // e_entry: the 64-bit boot-protocol entry
  CHECK(at<uint64_t>(f, 32) == 64);        // e_phoff
  CHECK(at<uint64_t>(f, 40) == 0);         // e_shoff: no sections
  CHECK(at<uint32_t>(f, 48) == 0);         // e_flags (QEMU refuses 0x00010004)
  CHECK(at<uint16_t>(f, 52) == 64);        // e_ehsize
  CHECK(at<uint16_t>(f, 54) == 56);        // e_phentsize (rust-vmm wants exactly this)
  CHECK(at<uint16_t>(f, 56) == 2);         // e_phnum
  CHECK(at<uint16_t>(f, 58) == 64);        // e_shentsize
  CHECK(at<uint16_t>(f, 60) == 0);         // e_shnum
  CHECK(at<uint16_t>(f, 62) == 0);         // e_shstrndx

  Result<BzImage> bz = read_bzimage(
      {*build_image(Context{.output = "x"}, input, test::options_for(Codec::kLz4), test::stand_in_blobs()), "x"});
  REQUIRE(bz.ok());
  const uint64_t image_size = bz->packer_record->image_size;
  // PT_LOAD: the protected-mode part, RWX, at its physical address, 2 MiB p_align.
  CHECK(at<uint32_t>(f, 64) == 1);
  CHECK(at<uint32_t>(f, 68) == 7);
  CHECK(at<uint64_t>(f, 72) == 0x1000);
  CHECK(at<uint64_t>(f, 80) == 0x201000);
  CHECK(at<uint64_t>(f, 88) == 0x201000);
  CHECK(at<uint64_t>(f, 96) == image_size);
  CHECK(at<uint64_t>(f, 104) == image_size);  // compressed: the stub's bss lies inside the file
  CHECK(at<uint64_t>(f, 112) == 0x200000);
  // PT_NOTE: the two notes in the header page, loaded nowhere.
  CHECK(at<uint32_t>(f, 120) == 4);
  CHECK(at<uint32_t>(f, 124) == 4);
  CHECK(at<uint64_t>(f, 128) == 176);
  CHECK(at<uint64_t>(f, 136) == 0);
  CHECK(at<uint64_t>(f, 144) == 0);
  CHECK(at<uint64_t>(f, 152) == 52);
  CHECK(at<uint64_t>(f, 160) == 0);
  CHECK(at<uint64_t>(f, 168) == 4);
  // Xen's note first: namesz 4, descsz 8, type 18, "Xen\0", the PVH entry as 8 bytes.
  const uint8_t xen[16] = {4, 0, 0, 0, 8, 0, 0, 0, 18, 0, 0, 0, 'X', 'e', 'n', 0};
  CHECK(std::memcmp(f.data() + 176, xen, sizeof(xen)) == 0);
  CHECK(at<uint64_t>(f, 192) == 0x201000 + test::kTestPvhEntry);
  // kpack's note: namesz 6, descsz 8, type 1, "kpack\0" padded to 8, the record's offset.
  const uint8_t kpack_note[20] = {6, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 'k', 'p', 'a', 'c', 'k', 0, 0, 0};
  CHECK(std::memcmp(f.data() + 200, kpack_note, sizeof(kpack_note)) == 0);
  CHECK(at<uint64_t>(f, 220) == test::kTestStubSize);
  // Zeros to the page's end: no "HdrS" at 0x202, no multiboot header.
  CHECK(std::all_of(f.begin() + 228, f.begin() + 0x1000, [](uint8_t b) { return b == 0; }));
  // Then exactly the bytes a bzImage carries after its setup sectors, and nothing after them.
  std::vector<uint8_t> part = bzimage_protected_part(input, Codec::kLz4);
  REQUIRE(f.size() == 0x1000 + part.size());
  CHECK(std::memcmp(f.data() + 0x1000, part.data(), part.size()) == 0);
}

TEST_CASE(
    "each codec's ELF is a protected-mode part at a congruent offset (a bzImage's but raw), and every VMM takes it") {
  KernelInput input = synthetic_input();
  for (Codec codec : kCodecs) {
    CAPTURE(codec_name(codec));
    ElfImage elf = test::pack_elf(input, codec);
    std::vector<uint8_t> part =
        codec == Codec::kRaw ? raw_elf_protected_part(input) : bzimage_protected_part(input, codec);
    CHECK(elf.load.file_offset % kElfLoadAlign == elf.load.address % kElfLoadAlign);
    CHECK(elf.load.file_offset >= kElfHeaderPage);
    REQUIRE(elf.bytes.size() == elf.load.file_offset + part.size());
    CHECK(std::memcmp(elf.bytes.data() + elf.load.file_offset, part.data(), part.size()) == 0);
    test::VmmElfVerdict verdict = test::check_vmm_elf(elf.bytes);
    CHECK_MESSAGE(verdict.ok(), verdict.violations.front());
    CHECK(verdict.pvh_entry == elf.load.address + test::kTestPvhEntry);
    CHECK(verdict.entry == elf.load.address + 0x200);
  }
}

TEST_CASE("the built-in stubs make ELFs every VMM takes, with the note on their PVH entry") {
  KernelInput input = synthetic_input();
  for (Codec codec : kCodecs) {
    CAPTURE(codec_name(codec));
    ImageBlobs blobs = built_in_blobs(codec);
    ElfImage elf = test::pack_elf(input, codec, nullptr, blobs);
    StubLayout layout = *read_stub_layout({blobs.stub, "stub"});
    test::VmmElfVerdict verdict = test::check_vmm_elf(elf.bytes);  // no multiboot header in the stub either
    CHECK_MESSAGE(verdict.ok(), verdict.violations.front());
    CHECK(verdict.pvh_entry == elf.load.address + layout.pvh_entry);
    Result<KpackElf> read = read_kpack_elf({elf.bytes, "out.elf"});
    REQUIRE_MESSAGE(read.ok(), read.error().message);
    CHECK(read->stub.pvh_entry == layout.pvh_entry);
  }
}

TEST_CASE("a raw ELF is loaded with its first kernel segment on the floor, so the kernel runs in place") {
  KernelInput input = synthetic_input();
  ElfImage elf = test::pack_elf(input, Codec::kRaw);
  Result<KpackElf> read = read_kpack_elf({elf.bytes, "out.elf"});
  REQUIRE(read.ok());
  const PackerRecord& info = *read->payload.packer_record;
  KernelHeaders stored;
  REQUIRE(parse_kernel_headers(elf.bytes.data() + read->payload.payload_offset, info.payload_size, info.payload_size,
                               &stored)
              .ok());
  CHECK(elf.load.placement == ElfPlacement::kKernelInPlace);
  CHECK(elf.load.address + info.payload_offset + stored.segments[0].offset == 0x1000000);
  // The header's pref_address is the same place: GRUB's BIOS linux puts it there too.
  Result<BzImage> bz = read_bzimage(
      {*build_image(Context{.output = "x"}, input, test::options_for(Codec::kRaw), test::stand_in_blobs()), "x"});
  REQUIRE(bz.ok());
  CHECK(elf.load.address == bz->header.pref_address);
  // Every byte of the kernel is in the file, the bss too, then the relocation table: nothing is
  // left for the stub to zero (each segment's p_filesz is its p_memsz).
  CHECK(read->load.filesz == info.image_size);
  CHECK(read->load.memsz == align_up(info.image_size, 4096));
  CHECK(info.payload_offset + stored.segments[0].offset == info.payload_offset + 0x1000);
  for (uint32_t i = 0; i < stored.segment_count; ++i) CHECK(stored.segments[i].filesz == stored.segments[i].memsz);
  CHECK(mirrors_physical(stored));
  CHECK(info.payload_size == stored.span() + 0x1000 + input.relocation_table.size());
  // The file is padded to the congruent offset (up to 2 MiB of zeros, which no loader reads).
  CHECK(elf.load.file_offset == elf.load.address % kElfLoadAlign);
}

TEST_CASE("choose_elf_load: below the floor when it fits, above the kernel when not, raw in place") {
  ProtectedPart part;
  part.bytes.resize(0x10000);
  part.memory_size = 0x10000;
  part.kernel_offset = 0x3000;
  const uint64_t floor = 0x1000000, span = 0x2E00000;
  ElfLoad load = choose_elf_load(part, false, floor, span);
  CHECK(load.address == 0x201000);
  CHECK(load.file_offset == 0x1000);
  CHECK(load.placement == ElfPlacement::kBelowFloor);
  // Exactly up to the floor still fits; a byte more goes above the kernel's span, on a 2 MiB
  // boundary plus the header page.
  part.memory_size = floor - 0x201000;
  CHECK(choose_elf_load(part, false, floor, span).placement == ElfPlacement::kBelowFloor);
  part.memory_size += 1;
  load = choose_elf_load(part, false, floor, span);
  CHECK(load.placement == ElfPlacement::kAboveKernel);
  CHECK(load.address == 0x3E01000);
  CHECK(load.file_offset == 0x1000);
  // --kernel-address 2 MiB leaves no room below it.
  part.memory_size = 0x10000;
  load = choose_elf_load(part, false, 0x200000, 0x300000);
  CHECK(load.placement == ElfPlacement::kAboveKernel);
  CHECK(load.address == 0x601000);
  // Raw: the first segment (0x3000 into the part) on the floor; the file offset congruent to it.
  load = choose_elf_load(part, true, floor, span);
  CHECK(load.placement == ElfPlacement::kKernelInPlace);
  CHECK(load.address == 0xFFD000);
  CHECK(load.file_offset == 0x1FD000);
  // A floor too low for the part below it: above the kernel, the stub moves the kernel.
  part.kernel_offset = 0x180000;
  load = choose_elf_load(part, true, 0x200000, 0x300000);
  CHECK(load.placement == ElfPlacement::kAboveKernel);
  // An address that is a multiple of 2 MiB would put the segment at file offset 0, over the
  // headers: the next congruent offset is 2 MiB.
  part.kernel_offset = 0;
  load = choose_elf_load(part, true, floor, span);
  CHECK(load.address == floor);
  CHECK(load.file_offset == 0x200000);
}

TEST_CASE("an image that does not fit below the floor is loaded above the kernel, and kpack info says so") {
  KernelInput input = synthetic_input();
  PackOptions options = test::options_for(Codec::kLz4);
  options.kernel_address = 0x200000;  // no room below the floor
  ElfImage elf = test::pack_elf(input, Codec::kLz4, &options);
  CHECK(elf.load.placement == ElfPlacement::kAboveKernel);
  CHECK(elf.load.address == align_up(0x200000 + input.kernel.span(), 0x200000) + 0x1000);
  CHECK(test::check_vmm_elf(elf.bytes).ok());
  std::string printed = test::printed_by([&](std::FILE* out) {
    REQUIRE(print_image_info({elf.bytes, "out.elf"}, out).ok());
  });
  CHECK(printed.find("above the kernel (it does not fit below its floor): the guest needs") != std::string::npos);
}

TEST_CASE("kpack info shows the ELF view, the notes, why the image lies there and the placement") {
  KernelInput input = test::synthetic_input();  // no relocation table: the engine runs to its end
  ElfImage elf = test::pack_elf(input, Codec::kLz4);
  std::string printed = test::printed_by([&](std::FILE* out) {
    REQUIRE(print_image_info({elf.bytes, "out.elf"}, out).ok());
  });
  CAPTURE(printed);
  CHECK(printed.rfind("out.elf: kpack ELF image (lz4), ", 0) == 0);
  CHECK(printed.find("elf: ELF64 x86-64 executable, entry 0x201200 (the 64-bit boot protocol's entry") !=
        std::string::npos);
  CHECK(printed.find("program headers (2):\n  LOAD  offset 0x00001000 paddr 0x00201000") != std::string::npos);
  CHECK(printed.find("  NOTE  offset 0x000000b0 paddr 0x00000000 filesz 0x00000034") != std::string::npos);
  CHECK(printed.find("notes (2):\n  Xen PHYS32_ENTRY: PVH entry 0x00201100") != std::string::npos);
  CHECK(printed.find("  kpack: record at 0x1000 in the PT_LOAD") != std::string::npos);
  CHECK(printed.find("below the kernel's floor (no more guest RAM than the stock bzImage needs)") != std::string::npos);
  CHECK(printed.find("kpack: codec lz4, kernel runs at or above 0x1000000") != std::string::npos);
  CHECK(printed.find("  at 0x00201000 (p_paddr: every ELF loader): kernel at 0x") != std::string::npos);
  CHECK(printed.find("WROTE OVER") == std::string::npos);

  ElfImage raw = test::pack_elf(input, Codec::kRaw);
  printed = test::printed_by([&](std::FILE* out) { REQUIRE(print_image_info({raw.bytes, "raw.elf"}, out).ok()); });
  CHECK(printed.find("raw, its first segment loaded where it runs (no copy)") != std::string::npos);
  CHECK(printed.find(", in place (nothing moved)") != std::string::npos);
}

TEST_CASE("extract and repacking read a kpack ELF as they read the bzImage of the same kernel") {
  KernelInput input = synthetic_input();
  const auto dir = std::filesystem::temp_directory_path() / ("kpack-elf-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (Codec codec : kCodecs) {
    CAPTURE(codec_name(codec));
    ElfImage elf = test::pack_elf(input, codec);
    Result<KpackElf> read = read_kpack_elf({elf.bytes, "out.elf"});
    REQUIRE_MESSAGE(read.ok(), read.error().message);
    Result<KernelPayload> from_elf = extract_kernel(read->payload, {elf.bytes, "out.elf"});
    REQUIRE_MESSAGE(from_elf.ok(), from_elf.error().message);
    // A raw ELF is laid out as an in-place bzImage's payload, but with its first segment right
    // after the stub: the same segments, at other file offsets.
    PackOptions bz_options = test::options_for(codec);
    if (codec == Codec::kRaw) bz_options.raw_layout = RawLayout::kInPlace;
    std::vector<uint8_t> bz = *build_image(Context{.output = "x"}, input, bz_options, test::stand_in_blobs());
    Result<KernelPayload> from_bz = extract_kernel(*read_bzimage({bz, "x"}), {bz, "x"});
    REQUIRE(from_bz.ok());
    if (codec != Codec::kRaw) CHECK(from_elf->elf == from_bz->elf);
    KernelHeaders elf_kernel, bz_kernel;
    REQUIRE(parse_kernel_headers(from_elf->elf.data(), from_elf->elf.size(), from_elf->elf.size(), &elf_kernel).ok());
    REQUIRE(parse_kernel_headers(from_bz->elf.data(), from_bz->elf.size(), from_bz->elf.size(), &bz_kernel).ok());
    REQUIRE(elf_kernel.segment_count == input.kernel.segment_count);
    for (uint32_t i = 0; i < elf_kernel.segment_count; ++i) {
      CHECK(test::same_segment(input.elf, input.kernel.segments[i], from_elf->elf, elf_kernel.segments[i]));
      CHECK(test::same_segment(from_bz->elf, bz_kernel.segments[i], from_elf->elf, elf_kernel.segments[i]));
    }
    CHECK(from_elf->relocation_table == input.relocation_table);
    // As the input of another pack: the same kernel, relocations and flags.
    const auto path = dir / (std::string(codec_name(codec)) + ".elf");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(elf.bytes.data()), static_cast<std::streamsize>(elf.bytes.size()));
    Result<KernelInput> again = load_kernel(Context{.input = path.string()});
    REQUIRE_MESSAGE(again.ok(), again.error().message);
    CHECK(again->elf == from_elf->elf);
    CHECK(again->relocation_table == input.relocation_table);
    CHECK(again->relocs_origin == RelocsOrigin::kStockImage);
    CHECK(again->kernel.physical.begin == input.kernel.physical.begin);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a vmlinux is not a kpack ELF; a kpack ELF is not a bzImage") {
  KernelInput input = synthetic_input();
  CHECK_FALSE(looks_like_kpack_elf(input.elf));
  ElfImage elf = test::pack_elf(input, Codec::kGzip);
  CHECK(looks_like_kpack_elf(elf.bytes));
  CHECK_FALSE(looks_like_bzimage(elf.bytes));
  CHECK_FALSE(read_bzimage({elf.bytes, "out.elf"}).ok());
}

TEST_CASE("a damaged kpack ELF is a one-line error naming the file") {
  KernelInput input = synthetic_input();
  const ElfImage good = test::pack_elf(input, Codec::kLz4);
  struct Case {
    const char* what;
    std::function<void(std::vector<uint8_t>&)> damage;
    const char* message;  // part of the error
  };
  const Case cases[] = {
      {"truncated in the segment", [](auto& f) { f.resize(f.size() - 1); }, "truncated: the PT_LOAD"},
      {"truncated in the headers", [](auto& f) { f.resize(100); }, "program headers"},
      {"not 64-bit", [](auto& f) { f[4] = 1; }, "not a 64-bit ELF file"},
      {"big-endian", [](auto& f) { f[5] = 2; }, "not a little-endian ELF file"},
      {"wrong machine", [](auto& f) { test::put(f, 18, uint16_t{3}); }, "not an x86-64 executable"},
      {"program header size", [](auto& f) { test::put(f, 54, uint16_t{32}); }, "program header size 32"},
      {"e_entry elsewhere", [](auto& f) { test::put(f, 24, uint64_t{0x201000}); }, "is not the stub's 64-bit entry"},
      {"PVH entry elsewhere", [](auto& f) { test::put(f, 192, uint64_t{0x201200}); }, "is not the stub's PVH entry"},
      {"no Xen note", [](auto& f) { test::put(f, 184, uint32_t{17}); }, "has no Xen PVH note"},
      {"a note past its PT_NOTE", [](auto& f) { test::put(f, 204, uint32_t{4096}); }, "runs past its PT_NOTE"},
      {"p_align 4 KiB", [](auto& f) { test::put(f, 112, uint64_t{0x1000}); }, "p_align 0x1000"},
      {"paddr below 1 MiB", [](auto& f) { test::put(f, 88, uint64_t{0x1000}); }, "between 1 MiB and 4 GiB"},
      {"record offset wrong", [](auto& f) { test::put(f, 220, uint64_t{0x800}); }, "no kpack record at 0x1800"},
      {"record damaged", [](auto& f) { test::put(f, 0x1000 + 4096 + 12, uint32_t{99}); }, "unknown payload codec"},
      {"image size changed", [](auto& f) { test::put(f, 96, uint64_t{f.size() - 0x1000 - 1}); }, "file truncated: "},
      {"a frame damaged", [](auto& f) { f[f.size() - 5] ^= 0xFF; }, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::vector<uint8_t> bad = good.bytes;
    c.damage(bad);
    Status status = print_image_info({bad, "bad.elf"}, stdout);
    REQUIRE_FALSE(status.ok());
    const std::string& message = status.error().message;
    CAPTURE(message);
    CHECK(message.rfind("bad.elf: ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find(c.message) != std::string::npos);
  }
}
