#include "packer/image_writer.h"

#include <algorithm>
#include <cstring>

#include "packer/byte_io.h"
#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "packer/frames.h"
#include "packer/kernel_version.h"
#include "packer/layout.h"
#include "packer/pe_image.h"

namespace kpack {
namespace {

constexpr uint32_t kDefaultCmdlineSize = 2047;  // COMMAND_LINE_SIZE - 1 on x86
constexpr uint64_t kPageSize = 4096;
// What 16-bit loaders load and leave alone below the heap and command line (boot.rst: X+0x8000).
constexpr uint64_t kMaxSetupSize = 0x8000;

uint64_t floor_of(const KernelInput& input, const PackOptions& options) {
  return options.kernel_address.value_or(input.kernel.physical.begin);
}

struct Payload {
  std::vector<uint8_t> bytes;
  std::vector<FrameEntry> frames;    // compressed payloads: the frame table
  uint64_t init_size_from_base = 0;  // how far past the image base the stub may write
};

// A raw payload is laid out so that, with the image at the default address, its lowest segment
// lands on the kernel's floor; `payload_offset` is where the payload starts in the image.
Result<Payload> build_raw_payload(const KernelInput& input, const PackOptions& options, uint64_t payload_offset,
                                  const std::string& name) {
  Payload payload;
  const KernelHeaders& k = input.kernel;
  uint64_t kernel_address = floor_of(input, options);
  // The zeros between the stub and the lowest segment become a hole in the file (file_io.cc).
  uint64_t segment_offset = kernel_address - kDefaultLoadAddress;
  if (kernel_address <= kDefaultLoadAddress || segment_offset < payload_offset + kPageSize)
    return error_in(name, "raw layout: kernel address leaves no room for the stub below it");
  // A raw payload stores the whole span, gaps and bss included: refuse absurd spans before
  // allocating them (a hostile ELF can place two tiny segments 4 GiB apart).
  if (k.span() > kMaxDecodedBytes)
    return error_in(name, "raw layout: the kernel's segments span " + std::to_string(k.span()) +
                              " bytes, more than a raw image can hold (1 GiB)");
  PayloadElf elf = layout_mirrored(input, segment_offset - payload_offset);
  payload.bytes = std::move(elf.bytes);
  payload.init_size_from_base = segment_offset + k.span();
  if (!input.relocs.empty()) payload.bytes.insert(payload.bytes.end(), input.relocs.begin(), input.relocs.end());
  return payload;
}

// The compact ELF cut into independent frames, then the relocation table in a frame of its own
// (stock images carry it after the ELF too; only a KASLR boot decodes it).
Result<Payload> build_compressed_payload(const KernelInput& input, const PackOptions& options, const std::string& name) {
  FramedPayload framed;
  KPACK_TRY_RESULT(append_elf_frames(options.compress, layout_compact(input), input.relocs, framed, name,
                                     options.progress));
  return Payload{std::move(framed.bytes), std::move(framed.frames), 0};
}

boot::SetupHeader make_header(const KernelInput& input, uint32_t setup_sects, uint64_t protected_size,
                              uint64_t payload_offset, uint64_t payload_size, uint64_t init_size,
                              uint64_t kernel_info_offset) {
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
  // windows above 4 GiB for itself, boot_params and the command line (stub/legacy/paging.cc).
  h.xloadflags = boot::kXlfKernel64 | boot::kXlfCanBeLoadedAbove4G;
  h.cmdline_size = input.cmdline_size.value_or(kDefaultCmdlineSize);
  h.payload_offset = static_cast<uint32_t>(payload_offset);
  h.payload_length = static_cast<uint32_t>(payload_size);
  h.pref_address = kDefaultLoadAddress;
  h.init_size = static_cast<uint32_t>(init_size);
  h.kernel_info_offset = static_cast<uint32_t>(kernel_info_offset);
  return h;
}

}  // namespace

Result<std::vector<uint8_t>> build_image(const KernelInput& input, const PackOptions& options,
                                         const ImageBlobs& blobs, const std::string& name) {
  if (blobs.setup.size() % boot::kSectorSize || blobs.setup.size() < 2 * boot::kSectorSize)
    return error_in(name, "internal error: bad setup blob");
  if (blobs.stub.size() % kStubRecordAlign) return error_in(name, "internal error: bad stub blob");
  StubLayout stub_layout = KPACK_TRY_RESULT(read_stub_layout(blobs.stub, name));

  // Protected-mode part: stub | StubRecord | kernel_info | frame table | padding | payload.
  uint64_t stub_info_offset = blobs.stub.size();
  uint64_t kernel_info_offset = stub_info_offset + sizeof(StubRecord);
  uint64_t frame_table_offset = kernel_info_offset + sizeof(boot::KernelInfo);
  bool raw = options.compress.codec == Codec::kRaw;
  Payload payload = KPACK_TRY_RESULT(raw ? build_raw_payload(input, options, align_up(frame_table_offset, kPageSize), name)
                                          : build_compressed_payload(input, options, name));
  if (payload.frames.size() > kMaxFrames)
    return error_in(name, "the payload has " + std::to_string(payload.frames.size()) + " frames, more than the " +
                              std::to_string(kMaxFrames) + " a kpack image can hold");
  // A raw payload's ELF keeps page-congruent offsets; frames are read from any address, and the
  // smaller alignment saves up to 4 KB (what put the xz image of Debian's generic kernel under the
  // stock one's size).
  uint64_t payload_offset =
      raw ? align_up(frame_table_offset, kPageSize)
          : align_up(frame_table_offset + payload.frames.size() * sizeof(FrameEntry), 16);
  // Worst case for a compressed payload: the kernel goes right after the image, at the next aligned address.
  if (!raw)
    payload.init_size_from_base = align_up(payload_offset + payload.bytes.size(), kPageSize) +
                                   input.kernel.alignment + input.kernel.span();
  uint64_t protected_size = payload_offset + payload.bytes.size();
  uint64_t init_size = align_up(std::max(protected_size, payload.init_size_from_base), kPageSize);
  if (protected_size > 0xFFFFFFFFull || init_size > 0xFFFFFFFFull)
    return error_in(name, "image too large for the boot protocol's 32-bit size fields");

  std::vector<uint8_t> image(blobs.setup.begin(), blobs.setup.end());
  // The version string goes in sectors of its own after the setup code, where the header's
  // kernel_version can point at it (relative to 0x200, as the protocol has it).
  uint32_t kernel_version = 0;
  if (input.version && input.version->size() <= kMaxVersionLength) {
    kernel_version = static_cast<uint32_t>(image.size() - 0x200);
    image.insert(image.end(), input.version->begin(), input.version->end());
    image.resize(align_up(image.size() + 1, boot::kSectorSize), 0);
  }
  // The protected-mode part starts on a page: then every PE section's RVA equals its file offset,
  // as in stock images, so a loader that copies the file flat (systemd-stub 252) runs it too.
  image.resize(align_up(image.size(), kPeSectionAlignment), 0);
  if (image.size() > kMaxSetupSize) return error_in(name, "internal error: setup sectors too large");
  uint64_t setup_size = image.size();
  uint32_t setup_sects = static_cast<uint32_t>(setup_size / boot::kSectorSize - 1);
  boot::SetupHeader header = make_header(input, setup_sects, protected_size, payload_offset,
                                         payload.bytes.size(), init_size, kernel_info_offset);
  header.kernel_version = static_cast<uint16_t>(kernel_version);
  // The EFI handover entry (GRUB's linuxefi and older systemd-stub), 64-bit: at 0x200 + offset.
  header.handover_offset = stub_layout.handover_entry - boot::kEntry64Offset;
  header.xloadflags = header.xloadflags | boot::kXlfEfiHandover64;
  put(image, boot::kSetupHeaderOffset, header);

  // Whole 512-byte file blocks, as the PE sections are; then the .sbat section's bytes, if any.
  image.resize(setup_size + align_up(protected_size, kPeFileAlignment), 0);
  PeInput pe{setup_size, stub_layout, payload_offset, protected_size, 0, options.sbat.size()};
  if (!options.sbat.empty()) {
    pe.sbat_offset = image.size();
    image.insert(image.end(), options.sbat.begin(), options.sbat.end());
    image.resize(align_up(image.size(), kPeFileAlignment), 0);
  }
  std::memcpy(image.data() + setup_size, blobs.stub.data(), blobs.stub.size());
  StubRecord info{};
  std::memcpy(info.magic, kStubRecordMagic, sizeof(info.magic));
  info.version = kStubRecordVersion;
  info.codec = static_cast<uint32_t>(options.compress.codec);
  info.payload_offset = payload_offset;
  info.payload_size = payload.bytes.size();
  info.image_size = protected_size;
  info.min_kernel_address = floor_of(input, options);
  info.kernel_alignment = input.kernel.alignment;
  info.relocations_size = input.relocs.size();
  info.flags = options.randomize_raw_physically ? kStubRandomizeRawPhysically : 0;
  info.digest = static_cast<uint32_t>(digest_for(options.compress.codec));
  info.frame_table_offset = raw ? 0 : frame_table_offset;
  info.frame_count = static_cast<uint32_t>(payload.frames.size());
  put(image, setup_size + stub_info_offset, info);
  for (size_t i = 0; i < payload.frames.size(); ++i)
    put(image, setup_size + frame_table_offset + i * sizeof(FrameEntry), payload.frames[i]);
  boot::KernelInfo kernel_info{};
  kernel_info.header = boot::kKernelInfoMagic;
  kernel_info.size = sizeof(boot::KernelInfo);
  kernel_info.size_total = sizeof(boot::KernelInfo);
  kernel_info.setup_type_max = 0;
  put(image, setup_size + kernel_info_offset, kernel_info);
  std::memcpy(image.data() + setup_size + payload_offset, payload.bytes.data(), payload.bytes.size());
  KPACK_TRY_RESULT(write_pe_headers(image, pe, name));
  return image;
}

}  // namespace kpack
