// make_seeds OUT_DIR: writes the seed corpora under OUT_DIR/<target>/ (committed as fuzz/corpus).
// Seeds are valid inputs of each target, built with the packer's own code from small synthetic
// kernels, so every fuzzer starts from paths that go all the way through.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "packer/codecs/codecs.h"
#include "packer/image/elf_writer.h"
#include "formats/boot_params.h"
#include "formats/pvh.h"
#include "formats/relocation_table.h"
#include "packer/image/frames.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "packer/image/layout.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/bytes.h"

using namespace kpack;
using kpack::test::SegmentSpec;
using test::put;
using Bytes = std::vector<uint8_t>;

namespace {

std::filesystem::path out_dir;

void write_seed(const std::string& target, const std::string& name, const Bytes& bytes) {
  std::filesystem::create_directories(out_dir / target);
  std::ofstream(out_dir / target / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (bytes.size() > 64 * 1024)
    std::fprintf(stderr, "make_seeds: %s/%s is over 64 KiB\n", target.c_str(), name.c_str());
}

KernelInput input_of(const Bytes& elf) {
  Result<KernelInput> input = kernel_input_from_elf(elf, "seed");
  if (!input) {
    std::fprintf(stderr, "make_seeds: %s\n", input.error().message.c_str());
    std::exit(1);
  }
  return *input;
}

// Shaped like a kernel (text, data, per-cpu with vaddr 0, init+bss) but a few KiB per segment.
std::vector<SegmentSpec> spread_segments() {
  using namespace elf;
  return {{0x1000000, 0x1800, 0x1800, kPfR | kPfX},
          {0x1200000, 0x800, 0x1000, kPfR | kPfW},
          {0x1202000, 0x400, 0x400, kPfR | kPfW, 0},
          {0x1203000, 0x600, 0x3000, kPfR | kPfW | kPfX}};
}
// Back to back in memory, so a raw (mirrored) payload stays small.
std::vector<SegmentSpec> packed_segments() {
  using namespace elf;
  return {{0x1000000, 0x1800, 0x2000, kPfR | kPfX},
          {0x1002000, 0x800, 0x1000, kPfR | kPfW},
          {0x1003000, 0x400, 0x3000, kPfR | kPfW | kPfX}};
}

// Small chunks, so the synthetic kernels' segments come in several frames.
FramedPayload compact_payload(const KernelInput& input, Codec codec) {
  FramedPayload payload;
  CompressOptions options{codec, 1, 1};
  options.chunk_size = 0x4000;
  if (!append_elf_frames(Context{.output = "seed"}, options, layout_compact(input), {}, payload, nullptr)) std::exit(1);
  return payload;
}

void elf_seeds() {
  write_seed("fuzz_elf", "spread.elf", kpack::test::make_kernel_elf(spread_segments()));
  write_seed("fuzz_elf", "packed.elf", kpack::test::make_kernel_elf(packed_segments(), 2));
  std::vector<SegmentSpec> reversed = spread_segments();
  std::swap(reversed[0], reversed[3]);  // file order differs from memory order
  Bytes elf = kpack::test::make_kernel_elf(reversed, 3);
  reinterpret_cast<elf::Ehdr*>(elf.data())->entry = 0x1000010;
  write_seed("fuzz_elf", "reversed.elf", elf);
  write_seed("fuzz_elf", "one-segment.elf", kpack::test::make_kernel_elf({{0x200000, 0x300, 0x300}}, 4));
  // Section headers: code sections starting the text segment (layout_compact splits it there).
  Bytes sectioned = kpack::test::make_kernel_elf(spread_segments(), 5);
  std::vector<elf::Shdr> sections(4);
  const uint64_t ax = elf::kShfAlloc | elf::kShfExecInstr;
  sections[1] = {0, 1, ax, 0, 0x1000, 0x800, 0, 0, 16, 0};
  sections[2] = {0, 1, ax, 0, 0x1810, 0x100, 0, 0, 16, 0};
  sections[3] = {0, 1, elf::kShfAlloc, 0, 0x1910, 0x100, 0, 0, 16, 0};
  kpack::test::append_section_headers(sectioned, sections);
  write_seed("fuzz_elf", "sections.elf", sectioned);
}

void bzimage_seeds() {
  KernelInput input = input_of(kpack::test::make_kernel_elf(spread_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    PackOptions options;
    options.compress = {codec, 1, 1};
    Result<Bytes> image =
        build_image(Context{.output = "seed"}, input, options, built_in_blobs(options.compress.codec));
    if (!image) std::exit(1);
    write_seed("fuzz_bzimage", std::string("kpack-") + codec_name(codec) + ".img", *image);
    // The bare stream, as the reader meets it inside a stock image.
    write_seed("fuzz_bzimage", std::string("stream-") + codec_name(codec), compact_payload(input, codec).bytes);
  }
  KernelInput small = input_of(kpack::test::make_kernel_elf(packed_segments(), 2));
  PackOptions raw;
  raw.compress = {Codec::kRaw, 0, 1};
  raw.kernel_address = 0x104000;  // not a valid CLI address, but it keeps the mirrored gap small
  Result<Bytes> image = build_image(Context{.output = "seed"}, small, raw, built_in_blobs(raw.compress.codec));
  if (!image) std::exit(1);
  write_seed("fuzz_bzimage", "kpack-raw.img", *image);
}

// kpack --elf of the synthetic kernel, every codec: the compressed ones load at 2 MiB + 4 KiB, so
// their files are a page of headers and the PT_LOAD. The raw one is placed with its first segment
// on the floor, its PT_LOAD's file offset congruent to its address modulo 2 MiB: the small kernel,
// with a floor that puts the PT_LOAD at 2 MiB + 4 KiB too, keeps it small.
ElfImage elf_seed(const KernelInput& input, Codec codec, std::optional<uint64_t> kernel_address) {
  PackOptions options;
  options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
  options.kernel_address = kernel_address;
  Result<ElfImage> image = build_elf_image(Context{.output = "seed"}, input, options, built_in_blobs(codec));
  if (!image) {
    std::fprintf(stderr, "make_seeds: %s\n", image.error().message.c_str());
    std::exit(1);
  }
  return *image;
}

void kpack_elf_seeds() {
  KernelInput input = input_of(kpack::test::make_kernel_elf(spread_segments()));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz})
    write_seed("fuzz_kpack_elf", std::string("kpack-") + codec_name(codec) + ".elf",
               elf_seed(input, codec, std::nullopt).bytes);
  KernelInput small = input_of(kpack::test::make_kernel_elf(packed_segments(), 2));
  const uint64_t floor = small.kernel.physical.begin;
  const uint64_t kernel_offset = floor - elf_seed(small, Codec::kRaw, std::nullopt).load.address;
  write_seed("fuzz_kpack_elf", "kpack-raw.elf", elf_seed(small, Codec::kRaw, 0x201000 + kernel_offset).bytes);
}

// [codec] [machine bits] [frame count] frame table, payload, as fuzz_unpack reads it.
Bytes unpack_input(Codec codec, uint8_t machine, const FramedPayload& payload) {
  uint32_t c = static_cast<uint32_t>(codec);
  if (payload.frames.size() > 255) std::exit(1);
  Bytes seed{static_cast<uint8_t>((c & 3) | (c & 4) << 2), machine,  // xz (4) is bit 4
             static_cast<uint8_t>(payload.frames.size())};
  const auto* table = reinterpret_cast<const uint8_t*>(payload.frames.data());
  seed.insert(seed.end(), table, table + payload.frames.size() * sizeof(FrameEntry));
  seed.insert(seed.end(), payload.bytes.begin(), payload.bytes.end());
  return seed;
}

FramedPayload raw_payload(const Bytes& bytes) { return FramedPayload{bytes, {}}; }

// A relocation table with 64-bit, inverse and 32-bit entries into a kernel's text (at 16 MiB) and
// data (at `data`), and a seed with KASLR asked for: codec bits 2-3 set, the table after the ELF,
// its size last.
Bytes relocation_table(uint64_t data) {
  Bytes table;
  auto va = [](uint64_t paddr) { return kpack::relocation_entry(paddr + kpack::kStartKernelMap); };
  for (uint32_t w : {0u, va(0x1000100), va(data + 0x10), 0u, va(data + 0x20), 0u, va(0x1000200)})
    kpack::test::append_le32(table, w);
  return table;
}

// The seed with KASLR asked for (codec bits 2-3): the relocation table after the ELF (in a frame
// of its own when compressed), its size last.
Bytes with_kaslr(Codec codec, uint8_t machine, FramedPayload payload, const Bytes& table) {
  if (codec == Codec::kRaw) {
    payload.bytes.insert(payload.bytes.end(), table.begin(), table.end());
  } else {
    const FrameEntry& last = payload.frames.back();
    uint64_t elf_end = uint64_t{last.file_offset} + uint64_t{last.size};
    if (!append_frames(Context{.output = "seed"}, {codec, 1, 1}, {{table, Content::kTable, elf_end, true}}, payload,
                       nullptr))
      std::exit(1);
  }
  Bytes seed = unpack_input(codec, machine, payload);
  seed[0] |= 0x0C;
  kpack::test::append_le32(seed, static_cast<uint32_t>(table.size()));
  return seed;
}

void unpack_seeds() {
  KernelInput spread = input_of(kpack::test::make_kernel_elf(spread_segments()));
  Bytes table = relocation_table(0x1200000);
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    FramedPayload payload = compact_payload(spread, codec);
    write_seed("fuzz_unpack", std::string(codec_name(codec)) + "-kaslr", with_kaslr(codec, 0x03, payload, table));
    write_seed("fuzz_unpack", std::string(codec_name(codec)) + "-basic", unpack_input(codec, 0x01, payload));
    write_seed("fuzz_unpack", std::string(codec_name(codec)) + "-threads", unpack_input(codec, 0x81, payload));
    write_seed("fuzz_unpack", std::string(codec_name(codec)) + "-initrd-hole",
               unpack_input(codec, 0x01 | 0x20 | 0x40 | 0x08, payload));
  }
  // Raw, with the first segment one page into the payload: placed at 0x1FF000 (bit 2) it is
  // 2 MiB-aligned and runs in place; at 0x101000 it has to move. The file ends with the last
  // segment's file bytes, so the relocation table of raw-kaslr lies where that segment's bss goes.
  KernelInput packed = input_of(kpack::test::make_kernel_elf(packed_segments(), 2));
  FramedPayload raw = raw_payload(layout_mirrored(packed, 0x1000).bytes);
  write_seed("fuzz_unpack", "raw-in-place", unpack_input(Codec::kRaw, 0x04 | 0x01, raw));
  write_seed("fuzz_unpack", "raw-moved", unpack_input(Codec::kRaw, 0x01, raw));
  write_seed("fuzz_unpack", "raw-compact", unpack_input(Codec::kRaw, 0x01, raw_payload(layout_compact(packed).bytes)));
  write_seed("fuzz_unpack", "raw-kaslr", with_kaslr(Codec::kRaw, 0x04 | 0x01, raw, relocation_table(0x1002000)));
}

// Low memory at 0x90000 as a loader leaves it: boot_params, the command line, two setup_data nodes.
void boot_env_seeds() {
  constexpr uint64_t kBase = 0x90000;
  Bytes memory(0x3000, 0);
  boot::BootParams p{};
  const boot::E820Entry map[] = {{0, 0x9FC00, 1},
                                 {0xF0000, 0x10000, 2},
                                 {0x100000, 0x1FEE0000, 1},
                                 {0xFEFFC000, 0x4000, 2},
                                 {0x100000000, 1ull << 30, 1}};
  p.e820_entries = sizeof(map) / sizeof(map[0]);
  std::memcpy(p.e820_table, map, sizeof(map));
  p.hdr.cmd_line_ptr = kBase + 0x1000;
  p.hdr.cmdline_size = 2047;
  p.hdr.ramdisk_image = 0x1F000000;
  p.hdr.ramdisk_size = 0x800000;
  p.hdr.setup_data = kBase + 0x2000;
  put(memory, 0, p);
  const char cmdline[] = "console=ttyS0 kpack.debug quiet";
  std::memcpy(memory.data() + 0x1000, cmdline, sizeof(cmdline));
  put(memory, 0x2000, boot::SetupData{kBase + 0x2100, 1, 32});
  put(memory, 0x2100, boot::SetupData{0, 2, 8});
  write_seed("fuzz_boot_env", "qemu-like", memory);
  p.hdr.setup_data = 0;
  p.hdr.ramdisk_size = 0;
  p.ext_cmd_line_ptr = 0;
  put(memory, 0, p);
  write_seed("fuzz_boot_env", "no-initrd-no-setup-data", Bytes(memory.begin(), memory.begin() + 0x1100));

  // The ACPI tables the SMP layer reads: RSDP 2.0 -> XSDT -> MADT with two Local APIC entries,
  // a disabled one and a Local x2APIC entry; checksums right.
  auto checksum = [&](uint64_t at, uint64_t length, uint64_t field) {
    uint8_t sum = 0;
    for (uint64_t i = 0; i < length; ++i) sum = static_cast<uint8_t>(sum + memory[at + i]);
    memory[at + field] = static_cast<uint8_t>(memory[at + field] - sum);
  };
  auto header = [&](uint64_t at, const char* signature, uint32_t length) {
    std::memcpy(memory.data() + at, signature, 4);
    put(memory, at + 4, uint32_t{length});
    memory[at + 8] = 5;
  };
  constexpr uint64_t kRsdp = 0x2800, kXsdt = 0x2840, kMadt = 0x2880;
  std::memcpy(memory.data() + kRsdp, "RSD PTR ", 8);
  memory[kRsdp + 15] = 2;
  put(memory, kRsdp + 20, uint32_t{36});
  put(memory, kRsdp + 24, uint64_t{kBase + kXsdt});
  checksum(kRsdp, 20, 8);
  checksum(kRsdp, 36, 32);
  header(kXsdt, "XSDT", 44);
  put(memory, kXsdt + 36, uint64_t{kBase + kMadt});
  checksum(kXsdt, 44, 9);
  const uint8_t entries[] = {0, 8, 0, 0, 1, 0,  0, 0, 0,    8, 1, 1, 1, 0, 0, 0, 0, 8, 2, 2,
                             0, 0, 0, 0, 9, 16, 0, 0, 0x2C, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0};
  header(kMadt, "APIC", 44 + sizeof(entries));
  put(memory, kMadt + 36, uint32_t{0xFEE00000});
  std::memcpy(memory.data() + kMadt + 44, entries, sizeof(entries));
  checksum(kMadt, 44 + sizeof(entries), 9);
  p.acpi_rsdp_addr = kBase + kRsdp;
  put(memory, 0, p);
  write_seed("fuzz_boot_env", "acpi-madt", memory);

  // A setup_data node at 0x7F800, in the page the trampoline would take: below the 64 KiB around
  // boot_params, where fuzz_boot_env mirrors the input's bytes after boot_params from 0x71000, so
  // the node's bytes are the input's at 0x1000 + (0x7F800 - 0x71000).
  Bytes low(0x10000, 0);
  p = boot::BootParams{};
  p.e820_entries = sizeof(map) / sizeof(map[0]);
  std::memcpy(p.e820_table, map, sizeof(map));
  p.hdr.setup_data = 0x7F800;
  put(low, 0, p);
  put(low, 0x1000 + (0x7F800 - 0x71000), boot::SetupData{0, 1, 16});
  write_seed("fuzz_boot_env", "setup-data-below-boot-params", low);
}

// fuzz_pack: its first byte picks the output (fuzz_pack.cc's choice_of), then a small vmlinux: two
// segments, a banner (which names the relocation format), and for some a paging hint.
void pack_seeds() {
  Bytes vmlinux = kpack::test::make_kernel_elf(
      {{0x1000000, 0x6000, 0x8000, elf::kPfR | elf::kPfX}, {0x1008000, 0x2000, 0x3000, elf::kPfR | elf::kPfW}}, 3);
  const char banner[] = "Linux version 6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP";
  vmlinux.insert(vmlinux.end(), banner, banner + sizeof(banner));
  const struct {
    const char* name;
    uint8_t choice;
  } outputs[] = {{"raw-in-place", 0x20}, {"raw-compact-elf", 0x38},     {"lz4", 0x21}, {"zstd-elf-5level", 0x72},
                 {"gzip", 0x23},         {"xz-facts-from-kernel", 0x04}};
  for (const auto& o : outputs) {
    Bytes seed{o.choice};
    seed.insert(seed.end(), vmlinux.begin(), vmlinux.end());
    write_seed("fuzz_pack", o.name, seed);
  }
}

// fuzz_stub_inputs: its first byte picks the parser (0 command line, 1 UTF-16 LoadOptions, 2 PVH
// start_info), the rest is what a loader or a user hands over.
void stub_input_seeds() {
  auto text = [](uint8_t parser, const std::string& s) {
    Bytes b{parser};
    b.insert(b.end(), s.begin(), s.end());
    return b;
  };
  write_seed("fuzz_stub_inputs", "cmdline-kdump",
             text(0,
                  "reset_devices systemd.unit=kdump-tools-dump.service nr_cpus=1 irqpoll nousb "
                  "disable_cpu_apicid=0 elfcorehdr=867732K kpack.debug"));
  write_seed("fuzz_stub_inputs", "cmdline-memmap",
             text(0,
                  "console=ttyS0 memmap=1M$0x1fe00000,16M#0x2000000 mem=4G memmap=exactmap memmap=640K@0 "
                  "memmap=1G@1M memmap=1M%0x8000000-1+2 hugepagesz=1G hugepages=2 nokaslr no5lvl kpack.cpus=3 "
                  "maxcpus=0x4 nosmp \"quoted value\" -- init args"));
  Bytes utf16{1};
  for (char16_t c : std::u16string(u"initrd=\\initrd.img console=ttyS0 \u00e9\U0001F600 quiet\n ignored"))
    utf16.push_back(static_cast<uint8_t>(c)), utf16.push_back(static_cast<uint8_t>(c >> 8));
  write_seed("fuzz_stub_inputs", "load-options-utf16", utf16);
  // QEMU's PVH start_info for -kernel with an initrd: a four-entry map, one module.
  Bytes pvh(1 + sizeof(pvh::StartInfo) + 4 * sizeof(pvh::MemmapEntry) + sizeof(pvh::Module), 0);
  pvh[0] = 2;
  pvh::StartInfo info{};
  info.magic = pvh::kStartInfoMagic;
  info.version = 1;
  info.nr_modules = 1;
  info.modlist_paddr = 0x7000;
  info.cmdline_paddr = 0x6000;
  info.rsdp_paddr = 0xF5A00;
  info.memmap_paddr = 0x5000;
  info.memmap_entries = 4;
  put(pvh, 1, info);
  const pvh::MemmapEntry map[] = {
      {0, 0x9FC00, 1, 0}, {0x9FC00, 0x400, 2, 0}, {0xF0000, 0x10000, 2, 0}, {0x100000, 0x1FEE0000, 1, 0}};
  for (size_t i = 0; i < 4; ++i) put(pvh, 1 + sizeof(info) + i * sizeof(pvh::MemmapEntry), map[i]);
  put(pvh, 1 + sizeof(info) + 4 * sizeof(pvh::MemmapEntry), pvh::Module{0x1F000000, 0x800000, 0, 0});
  write_seed("fuzz_stub_inputs", "pvh-start-info", pvh);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  out_dir = argv[1];
  elf_seeds();
  bzimage_seeds();
  kpack_elf_seeds();
  unpack_seeds();
  boot_env_seeds();
  pack_seeds();
  stub_input_seeds();
  return 0;
}
