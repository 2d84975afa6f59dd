#include "packer/image/image_writer.h"

#include <algorithm>
#include <cstring>

#include "packer/base/byte_io.h"
#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "formats/relocation_table.h"
#include "packer/image/frames.h"
#include "packer/input/kernel_version.h"
#include "packer/image/layout.h"
#include "packer/image/pe_headers.h"

namespace kpack {
namespace {

constexpr uint32_t kDefaultCmdlineSize = 2047;  // COMMAND_LINE_SIZE - 1 on x86
constexpr uint64_t kPageSize = 4096;
// What 16-bit loaders load and leave alone below the heap and command line (boot.rst: X+0x8000).
constexpr uint64_t kMaxSetupSize = 0x8000;

struct Payload {
  std::vector<uint8_t> bytes;
  std::vector<FrameEntry> frames;    // compressed payloads: the frame table
  uint64_t init_size_from_base = 0;  // how far past the image base the stub may write
  uint64_t pref_address = kDefaultLoadAddress;
  uint64_t kernel_offset = 0;  // raw: the first segment's offset in the protected-mode part
  Range hole;                  // in-place raw payloads: the zero pages before the kernel (pe_headers.h)
};

// A raw payload of `elf_bytes` whose first segment lies `segment_offset` bytes into the
// protected-mode part: the stub may write up to the end of the kernel's span from there.
Payload raw_payload(std::vector<uint8_t> elf_bytes, uint64_t segment_offset, const KernelInput& input) {
  Payload payload;
  payload.bytes = std::move(elf_bytes);
  payload.kernel_offset = segment_offset;
  payload.init_size_from_base = segment_offset + input.kernel.span();
  return payload;
}

// An in-place raw payload: the mirrored ELF, its lowest segment `kernel_address - 1 MiB` into the
// protected-mode part, so that the part at the default address puts every segment where it runs
// (or, after the stub, on the page after the payload's headers: kpack --elf loads the part there).
// pref_address is that default address; the zeros before the first segment become a hole in the
// file (file_io.cc) and in no PE section. After the stub (an ELF), the bss is in the file too (a
// hole as well), and the relocation table after it: the ELF loader copies it with the rest, and
// the stub, which would zero it at a guest instruction per 8 bytes (what is not .bss or .brk,
// which the kernel clears itself), has nothing to zero. A bzImage leaves it to the stub: a UEFI
// loader reads every byte of the PE view's sections, several instructions a byte (doc/benchmark-history.md, "Figures the code rests on"), and
// leaving the bss out of the PE section's file bytes while the relocation table follows would take
// a section more than the headers below the setup header hold.
Result<Payload> build_in_place_raw_payload(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                           uint64_t payload_offset) {
  uint64_t kernel_address = kernel_floor(input, options);
  const bool after_stub = options.raw_layout == RawLayout::kInPlaceAfterStub;
  uint64_t segment_offset = after_stub ? payload_offset + kPageSize : kernel_address - kDefaultLoadAddress;
  if ((!after_stub && kernel_address <= kDefaultLoadAddress) || segment_offset < payload_offset + kPageSize)
    return ctx.about_output("raw layout: kernel address leaves no room for the stub below it");
  PayloadElf elf = layout_mirrored(input, segment_offset - payload_offset,
                                   after_stub ? HighestTail::kStored : HighestTail::kLeftToStub);
  if (elf.kernel.headers_end > kPageSize)
    return ctx.about_output("raw layout: the kernel's program headers do not fit in a page");
  Payload payload = raw_payload(std::move(elf.bytes), segment_offset, input);
  payload.hole = Range{align_up(elf.kernel.headers_end, kPageSize), elf.kernel.segments[0].offset & ~(kPageSize - 1)};
  return payload;
}

// A compact raw payload is the compact ELF, as the compressed ones frame it, with its long runs of
// zero pages left out too: no zeros before the kernel, none between its segments and few inside
// them, since a firmware reading the file pays for every byte of it (doc/image-format.md).
// pref_address puts the first segment on the kernel's floor, where a loader that honours it leaves
// the kernel; elsewhere the stub moves the segments there.
Result<Payload> build_compact_raw_payload(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                          uint64_t payload_offset) {
  PayloadElf elf = layout_compact(input, InnerZeros::kLeftOut);
  if (!is_physically_ordered(elf.kernel))
    return ctx.about_input("raw layout: the kernel's segments are not in physical order in its file");
  uint64_t segment_offset = payload_offset + elf.kernel.segments[0].offset;
  Payload payload = raw_payload(std::move(elf.bytes), segment_offset, input);
  uint64_t kernel_address = kernel_floor(input, options);
  if (kernel_address >= kDefaultLoadAddress + segment_offset) payload.pref_address = kernel_address - segment_offset;
  return payload;
}

Result<Payload> build_raw_payload(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                  uint64_t payload_offset) {
  // A raw kernel's whole span, gaps and bss included, is what init_size asks a loader for and what
  // the stub moves segments across: refuse absurd spans (a hostile ELF can place two tiny segments
  // 4 GiB apart).
  if (input.kernel.span() > kMaxDecodedBytes)
    return ctx.about_input("raw layout: the kernel's segments span " + std::to_string(input.kernel.span()) +
                           " bytes, more than a raw image can hold (1 GiB)");
  Payload payload = KPACK_TRY_RESULT(options.raw_layout == RawLayout::kCompact
                                         ? build_compact_raw_payload(ctx, input, options, payload_offset)
                                         : build_in_place_raw_payload(ctx, input, options, payload_offset));
  // The relocation table after the ELF's last byte, where the kernel's bss will be (compact) or
  // past the kernel (in place); the stub copies it aside before any segment moves over it or the
  // bss is zeroed (stub/unpack/unpack.cc).
  if (!input.relocation_table.empty())
    payload.bytes.insert(payload.bytes.end(), input.relocation_table.begin(), input.relocation_table.end());
  return payload;
}

// The compact ELF cut into independent frames, then the relocation table, coded
// (code_relocation_planes), in a frame of its own (stock images carry it after the ELF too; only a
// KASLR boot decodes it).
Result<Payload> build_compressed_payload(const Context& ctx, const KernelInput& input, const PackOptions& options) {
  std::vector<uint8_t> coded_table(input.relocation_table.size());
  code_relocation_planes(input.relocation_table.data(), input.relocation_table.size(), coded_table.data());
  FramedPayload framed;
  KPACK_TRY_RESULT(
      append_elf_frames(ctx, options.compress, layout_compact(input), coded_table, framed, options.progress));
  return Payload{std::move(framed.bytes), std::move(framed.frames)};
}

boot::SetupHeader make_header(const KernelInput& input, uint32_t setup_sects, uint64_t protected_size,
                              uint64_t payload_offset, uint64_t payload_size, uint64_t init_size,
                              uint64_t kernel_info_offset, uint64_t pref_address) {
  boot::SetupHeader h{};
  h.setup_sects = static_cast<uint8_t>(setup_sects);
  // As stock images: the root file system starts read-only unless "rw" is given (the kernel
  // reads root_flags), and the setup keeps the firmware's 80x25 text mode unless vga= says else.
  h.root_flags = 1;
  h.syssize = static_cast<uint32_t>((protected_size + 15) / 16);
  h.vid_mode = boot::kVidModeNormal;
  h.boot_flag = boot::kBootFlag;
  h.jump = boot::kHeaderJump;
  h.header = boot::kHeaderMagic;
  h.version = boot::kProtocolVersion;
  h.start_sys_seg = 0x1000;  // obsolete; what stock images carry
  h.loadflags = boot::kLoadedHigh;
  h.setup_move_size = 0x8000;
  h.code32_start = boot::kDefaultCode32Start;
  h.initrd_addr_max = 0x7FFFFFFF;
  h.kernel_alignment = static_cast<uint32_t>(input.kernel.alignment);
  h.relocatable_kernel = 1;
  h.min_alignment = 12;  // the stub itself needs only page alignment
  // Above 4G: kexec-tools' bzImage64 loader and kexec_file_load insist on it; the stub maps
  // windows above 4 GiB for itself, boot_params and the command line (stub/paging/identity_map.cc).
  // 5-level: the 64-bit entry takes a CPU in either paging mode, as stock images say of theirs, and
  // the second bit says whether the kernel runs with 5 levels (stock: CONFIG_X86_5LEVEL).
  h.xloadflags = boot::kXlfKernel64 | boot::kXlfCanBeLoadedAbove4G | boot::kXlf5Level |
                 (input.five_level_paging ? boot::kXlf5LevelEnabled : 0);
  h.cmdline_size = input.cmdline_size.value_or(kDefaultCmdlineSize);
  h.payload_offset = static_cast<uint32_t>(payload_offset);
  h.payload_length = static_cast<uint32_t>(payload_size);
  h.pref_address = pref_address;
  h.init_size = static_cast<uint32_t>(init_size);
  h.kernel_info_offset = static_cast<uint32_t>(kernel_info_offset);
  return h;
}

// Where each piece of the protected-mode part goes, as offsets into it:
// stub | PackerRecord | kernel_info | frame table | padding | payload.
struct PartLayout {
  uint64_t packer_record = 0;
  uint64_t kernel_info = 0;
  uint64_t frame_table = 0;
  uint64_t payload = 0;
  uint64_t size = 0;       // through the payload's end
  uint64_t init_size = 0;  // what the boot protocol's init_size says: the image and all the stub may write
};

PartLayout headers_after(uint64_t stub_size) {
  PartLayout part;
  part.packer_record = stub_size;
  part.kernel_info = part.packer_record + sizeof(PackerRecord);
  part.frame_table = part.kernel_info + sizeof(boot::KernelInfo);
  return part;
}

// The payload's offset after the frame table, and the sizes the setup header gives.
Status place_payload(const Context& ctx, const KernelInput& input, bool raw, Payload& payload, PartLayout& part) {
  if (payload.frames.size() > kMaxFrames)
    return ctx.about_output("the payload has " + std::to_string(payload.frames.size()) + " frames, more than the " +
                            std::to_string(kMaxFrames) + " a kpack image can hold");
  // A raw payload's ELF keeps page-congruent offsets; frames are read from any address, and the
  // smaller alignment saves up to 4 KB (what put the xz image of Debian's generic kernel under the
  // stock one's size).
  part.payload = raw ? align_up(part.frame_table, kPageSize)
                     : align_up(part.frame_table + payload.frames.size() * sizeof(FrameEntry), 16);
  // Worst case for a compressed payload: the kernel goes right after the image, at the next aligned address.
  if (!raw)
    payload.init_size_from_base =
        align_up(part.payload + payload.bytes.size(), kPageSize) + input.kernel.alignment + input.kernel.span();
  part.size = part.payload + payload.bytes.size();
  part.init_size = align_up(std::max(part.size, payload.init_size_from_base), kPageSize);
  if (part.size > 0xFFFFFFFFull || part.init_size > 0xFFFFFFFFull)
    return ctx.about_output("image too large for the boot protocol's 32-bit size fields");
  return Ok{};
}

// The setup code, then the version string in sectors of its own, where the header's
// kernel_version can point at it (relative to 0x200, as the protocol has it).
std::vector<uint8_t> setup_sectors(std::span<const uint8_t> setup, const std::optional<std::string>& version,
                                   uint32_t& kernel_version) {
  std::vector<uint8_t> image(setup.begin(), setup.end());
  kernel_version = 0;
  if (version && version->size() <= kMaxVersionLength) {
    kernel_version = static_cast<uint32_t>(image.size() - 0x200);
    image.insert(image.end(), version->begin(), version->end());
    image.resize(align_up(image.size() + 1, boot::kSectorSize), 0);
  }
  // The protected-mode part starts on a page: then every PE section's RVA equals its file offset,
  // as in stock images, so a loader that copies the file flat (systemd-stub 252) runs it too.
  image.resize(align_up(image.size(), kPeSectionAlignment), 0);
  return image;
}

PackerRecord make_packer_record(const KernelInput& input, const PackOptions& options, const PartLayout& part,
                                const Payload& payload) {
  const bool raw = options.compress.codec == Codec::kRaw;
  PackerRecord info{};
  std::memcpy(info.magic, kPackerRecordMagic, sizeof(info.magic));
  info.version = kPackerRecordVersion;
  info.codec = static_cast<uint32_t>(options.compress.codec);
  info.payload_offset = part.payload;
  info.payload_size = payload.bytes.size();
  info.image_size = part.size;
  info.min_kernel_address = kernel_floor(input, options);
  info.kernel_alignment = input.kernel.alignment;
  info.relocations_size = input.relocation_table.size();
  info.flags = (options.randomize_raw_physically ? kRecordRandomizeRawPhysically : 0) |
               (input.five_level_paging ? kRecordKernelFiveLevel : 0) |
               (input.accepts_memory ? kRecordKernelAcceptsMemory : 0) |
               (!raw && !input.relocation_table.empty() ? kRecordRelocationPlanes : 0);
  info.digest = static_cast<uint32_t>(digest_for(options.compress.codec));
  info.frame_table_offset = raw ? 0 : part.frame_table;
  info.frame_count = static_cast<uint32_t>(payload.frames.size());
  // In 16-bit pages: a kernel spanning 256 MiB or more has its bss zeroed by the stub.
  const Range& bss = input.cleared_by_kernel;
  if (!bss.empty() && bss.end / kPageSize <= UINT16_MAX) {
    info.bss_page = static_cast<uint16_t>(bss.begin / kPageSize);
    info.bss_pages = static_cast<uint16_t>(bss.size() / kPageSize);
  }
  return info;
}

// The protected-mode part's bytes: the stub and what follows it.
std::vector<uint8_t> protected_bytes(std::span<const uint8_t> stub, const PackerRecord& record, const Payload& payload,
                                     const PartLayout& part) {
  std::vector<uint8_t> bytes(part.size, 0);
  std::memcpy(bytes.data(), stub.data(), stub.size());
  put(bytes, part.packer_record, record);
  for (size_t i = 0; i < payload.frames.size(); ++i)
    put(bytes, part.frame_table + i * sizeof(FrameEntry), payload.frames[i]);
  boot::KernelInfo kernel_info{};
  kernel_info.header = boot::kKernelInfoMagic;
  kernel_info.size = sizeof(boot::KernelInfo);
  kernel_info.size_total = sizeof(boot::KernelInfo);
  kernel_info.setup_type_max = 0;
  put(bytes, part.kernel_info, kernel_info);
  std::memcpy(bytes.data() + part.payload, payload.bytes.data(), payload.bytes.size());
  return bytes;
}

}  // namespace

uint64_t kernel_floor(const KernelInput& input, const PackOptions& options) {
  return options.kernel_address.value_or(input.kernel.physical.begin);
}

Result<ProtectedPart> build_protected_part(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                           const ImageBlobs& blobs) {
  if (blobs.stub.size() % kPackerRecordAlign) return ctx.about_output("internal error: bad stub blob");
  StubLayout stub_layout = KPACK_TRY_RESULT(read_stub_layout({blobs.stub, "the built-in stub"}));
  // The payload first: its frame count decides where it starts.
  PartLayout part = headers_after(blobs.stub.size());
  const bool raw = options.compress.codec == Codec::kRaw;
  Payload payload = KPACK_TRY_RESULT(raw ? build_raw_payload(ctx, input, options, align_up(part.frame_table, kPageSize))
                                         : build_compressed_payload(ctx, input, options));
  KPACK_TRY_RESULT(place_payload(ctx, input, raw, payload, part));
  ProtectedPart out;
  out.bytes = protected_bytes(blobs.stub, make_packer_record(input, options, part, payload), payload, part);
  out.stub = stub_layout;
  out.packer_record_offset = part.packer_record;
  out.kernel_info_offset = part.kernel_info;
  out.payload_offset = part.payload;
  out.payload_size = payload.bytes.size();
  out.init_size = part.init_size;
  out.memory_size = raw ? part.init_size : part.size;
  out.pref_address = payload.pref_address;
  out.kernel_offset = payload.kernel_offset;
  if (!payload.hole.empty()) out.hole = Range{part.payload + payload.hole.begin, part.payload + payload.hole.end};
  return out;
}

Result<std::vector<uint8_t>> build_image(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                         const ImageBlobs& blobs) {
  if (blobs.setup.size() % boot::kSectorSize || blobs.setup.size() < 2 * boot::kSectorSize)
    return ctx.about_output("internal error: bad setup blob");
  ProtectedPart part = KPACK_TRY_RESULT(build_protected_part(ctx, input, options, blobs));
  const uint64_t size = part.bytes.size();

  uint32_t kernel_version = 0;
  std::vector<uint8_t> image = setup_sectors(blobs.setup, input.version, kernel_version);
  if (image.size() > kMaxSetupSize) return ctx.about_output("internal error: setup sectors too large");
  const uint64_t setup_size = image.size();
  boot::SetupHeader header =
      make_header(input, static_cast<uint32_t>(setup_size / boot::kSectorSize - 1), size, part.payload_offset,
                  part.payload_size, part.init_size, part.kernel_info_offset, part.pref_address);
  header.kernel_version = static_cast<uint16_t>(kernel_version);
  // The EFI handover entry (GRUB's linuxefi and older systemd-stub), 64-bit: at 0x200 + offset.
  header.handover_offset = part.stub.handover_entry - boot::kEntry64Offset;
  header.xloadflags = header.xloadflags | boot::kXlfEfiHandover64;
  put(image, boot::kSetupHeaderOffset, header);

  // Whole 512-byte file blocks, as the PE sections are; then the .sbat section's bytes, if any.
  image.resize(setup_size + align_up(size, kPeFileAlignment), 0);
  PeInput pe{setup_size, part.stub, part.payload_offset, size, part.memory_size, 0, options.sbat.size()};
  pe.hole = part.hole;
  if (!options.sbat.empty()) {
    pe.sbat_offset = image.size();
    image.insert(image.end(), options.sbat.begin(), options.sbat.end());
    image.resize(align_up(image.size(), kPeFileAlignment), 0);
  }
  std::memcpy(image.data() + setup_size, part.bytes.data(), size);
  KPACK_TRY_RESULT(write_pe_headers(ctx, image, pe));
  return image;
}

}  // namespace kpack
