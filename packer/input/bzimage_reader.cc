// Reading boot-protocol images. Everything here distrusts the file: each offset and size is
// checked against the bytes actually present before it is used, with overflow-safe arithmetic.
#include "packer/input/bzimage_reader.h"

#include <algorithm>
#include <cstring>

#include <xxhash.h>

#include "formats/call_targets.h"
#include "formats/elf64.h"
#include "formats/kpack_image.h"
#include "formats/relocation_table.h"
#include "packer/base/byte_io.h"
#include "packer/input/input_kind.h"
#include "packer/input/raw_pieces.h"
#include "stub/unpack/frame_table.h"
#include "stub/entry/packer_record_check.h"

namespace kpack {

namespace {

constexpr uint32_t kMinPayloadVersion = 0x0208;  // payload_offset/payload_length appeared in 2.08

// True when [offset, offset + size) lies within `limit`, without overflowing.
bool fits(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

// A kpack image's record sits right before its kernel_info (formats/kpack_image.h); a stock image
// has other bytes there. The record is checked exactly as the stub checks it.
Result<std::optional<PackerRecord>> find_packer_record(const FileView& file, std::span<const uint8_t> protected_mode,
                                                       const BzImage& image) {
  const uint64_t kernel_info = image.header.kernel_info_offset;
  if (image.header.version < 0x020F || kernel_info < sizeof(PackerRecord) || kernel_info > protected_mode.size())
    return std::optional<PackerRecord>();
  const uint64_t at = packer_record_offset(kernel_info);
  if (std::memcmp(protected_mode.data() + at, kPackerRecordMagic, sizeof(kPackerRecordMagic)) != 0)
    return std::optional<PackerRecord>();
  const auto info = KPACK_TRY_RESULT(read_packer_record(file, protected_mode, at, image.setup_size));
  const std::string where = " (kpack record at " + hex(image.setup_size + at) + ")";
  if (info.payload_offset != image.header.payload_offset || info.payload_size != image.header.payload_length)
    return file.error("the kpack record's payload (offset " + hex(info.payload_offset) + ", " +
                      std::to_string(info.payload_size) + " bytes) disagrees with the setup header's" + " (offset " +
                      hex(image.header.payload_offset) + ", " + std::to_string(image.header.payload_length) +
                      " bytes)" + where);
  return std::optional<PackerRecord>(info);
}

// A kpack image's frames are proven as the stub proves them: the frame table checked as the stub
// checks it, and each frame's digest against its compressed bytes. Then each frame's coding is
// undone in `decoded`, the frames' bytes one after another.
Status check_and_uncode_frames(const PackedPayload& image, const FileView& view, std::span<uint8_t> decoded) {
  std::span<const uint8_t> file = view.bytes;
  const PackerRecord& info = *image.packer_record;
  uint64_t count = info.frame_count, at = image.protected_offset + info.frame_table_offset;
  if (count == 0 || !fits(at, count * sizeof(FrameEntry), file.size()))
    return view.error("the frame table lies outside the file");
  std::vector<FrameEntry> frames(count);
  std::memcpy(frames.data(), file.data() + at, count * sizeof(FrameEntry));
  StubStatus status =
      check_frame_table(frames.data(), static_cast<uint32_t>(count), info.payload_size, info.relocations_size);
  if (!status.ok()) return view.error(std::string(status.message) + " (" + hex(status.a) + ", " + hex(status.b) + ")");
  const FrameEntry& last = frames.back();
  if (uint64_t{last.file_offset} + uint64_t{last.size} != decoded.size())
    return view.error("the frame table does not describe the decoded payload");
  const uint8_t* payload = file.data() + image.payload_offset;
  if (info.digest == static_cast<uint32_t>(FrameDigest::kXxh3))
    for (uint64_t i = 0; i < count; ++i)
      if (XXH3_64bits(payload + frames[i].payload_offset, frames[i].payload_size) != frames[i].digest)
        return view.error("payload frame " + std::to_string(i) + " does not match its digest (corrupt image)");
  for (const FrameEntry& f : frames) undo_frame_coding(f, decoded.data() + f.file_offset);
  return Ok{};
}

}  // namespace

Result<PackerRecord> read_packer_record(const FileView& file, std::span<const uint8_t> protected_part, uint64_t at,
                                        uint64_t file_offset) {
  const std::string where = " (kpack record at " + hex(file_offset + at) + ")";
  if (at > protected_part.size() || protected_part.size() - at < sizeof(PackerRecord))
    return file.error("the kpack record lies outside the protected-mode part" + where);
  const auto info = get<PackerRecord>(protected_part, at);
  if (info.version != kPackerRecordVersion)
    return file.error("written by a kpack with record version " + std::to_string(info.version) +
                      ", this kpack reads version " + std::to_string(kPackerRecordVersion) + where);
  StubStatus status = check_packer_record(info, at);
  if (!status.ok())
    return file.error(std::string(status.message) + " (" + hex(status.a) + ", " + hex(status.b) + ")" + where);
  // The record is checked, so its image size is what the packer wrote: a file shorter than that
  // lost its end.
  if (info.image_size > protected_part.size())
    return file.error("file truncated: " + std::to_string(file_offset + protected_part.size()) + " of " +
                      std::to_string(file_offset + info.image_size) + " bytes" + where);
  return info;
}

bool looks_like_bzimage(std::span<const uint8_t> file) {
  constexpr uint64_t kMagicAt = 0x202;
  return file.size() >= kMagicAt + 4 && get<ul32>(file, kMagicAt) == boot::kHeaderMagic;
}

Result<BzImage> read_bzimage(const FileView& view) {
  using namespace boot;
  std::span<const uint8_t> file = view.bytes;
  if (!looks_like_bzimage(file)) return wrong_kind(view, "a boot image (a bzImage or a kpack image)");
  KPACK_TRY_RESULT(check_not_truncated(view, kSetupHeaderEnd));
  BzImage image;
  image.header = get<SetupHeader>(file, kSetupHeaderOffset);
  SetupHeader& hdr = image.header;
  if (hdr.boot_flag != kBootFlag)
    return view.error("not a bzImage: boot flag is " + hex(hdr.boot_flag) + ", expected 0xaa55");
  if (hdr.version < kMinPayloadVersion)
    return view.error("boot protocol " + std::to_string(hdr.version >> 8) + "." + std::to_string(hdr.version & 0xFF) +
                      " is too old (payload location needs 2.08)");

  // The jump at 0x200 lands right after the header, so bytes past that belong to the setup code
  // of an older protocol version, not to fields it defines.
  const uint64_t header_end = 0x202 + file[0x201];
  if (header_end < kSetupHeaderEnd) {
    const uint64_t keep = std::max<uint64_t>(header_end, 0x250) - kSetupHeaderOffset;
    std::memset(reinterpret_cast<uint8_t*>(&hdr) + keep, 0, sizeof(hdr) - keep);
  }

  const uint32_t setup_sects = hdr.setup_sects == 0 ? kDefaultSetupSects : hdr.setup_sects;
  image.setup_size = uint64_t{setup_sects + 1} * kSectorSize;
  image.protected_offset = image.setup_size;
  // What the header says the file holds: the setup, then syssize paragraphs. A file shorter than
  // that lost its end; a payload beyond it too is a header that contradicts itself.
  const uint64_t claimed = image.setup_size + uint64_t{hdr.syssize} * 16;
  if (image.setup_size >= file.size()) {
    KPACK_TRY_RESULT(check_not_truncated(view, claimed));
    return view.error("the real-mode setup (" + std::to_string(image.setup_size) + " bytes) covers the whole " +
                      std::to_string(file.size()) + "-byte file");
  }
  const auto protected_mode = file.subspan(image.setup_size);

  // A relocatable image is loaded at pref_address and may use init_size bytes from there (2.10+).
  if (hdr.version >= 0x020A && hdr.pref_address > UINT64_MAX - hdr.init_size)
    return view.error("the setup header's pref_address " + hex(hdr.pref_address) + " plus its init_size " +
                      hex(hdr.init_size) + " wraps around the address space");
  if (hdr.payload_length == 0) return view.error("the setup header gives an empty payload");
  if (!fits(hdr.payload_offset, hdr.payload_length, protected_mode.size())) {
    KPACK_TRY_RESULT(check_not_truncated(view, claimed));
    return view.error("payload (offset " + hex(hdr.payload_offset) + ", " + std::to_string(hdr.payload_length) +
                      " bytes) lies outside the " + std::to_string(protected_mode.size()) +
                      "-byte protected-mode part");
  }
  image.payload_offset = image.setup_size + hdr.payload_offset;
  image.payload_size = hdr.payload_length;

  const auto payload = file.subspan(image.payload_offset, image.payload_size);
  const auto format = detect_stream_format(payload);
  if (!format) {
    std::string first;
    for (size_t i = 0; i < std::min<size_t>(payload.size(), 8); ++i) first += (i ? " " : "") + hex(payload[i]);
    return view.error("unknown payload format (first bytes " + first + ")");
  }
  image.format = *format;

  image.packer_record = KPACK_TRY_RESULT(find_packer_record(view, protected_mode, image));
  if (image.packer_record) image.packer_record_offset = packer_record_offset(hdr.kernel_info_offset);
  return image;
}

Result<uint64_t> elf_file_extent(const FileView& elf) {
  using namespace elf;
  std::span<const uint8_t> elf_bytes = elf.bytes;
  if (elf_bytes.size() < sizeof(Ehdr) || std::memcmp(elf_bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return elf.error("the decompressed kernel is not an ELF file");
  const auto ehdr = get<Ehdr>(elf_bytes, 0);
  if (ehdr.ident[4] != kClass64) return elf.error("the kernel ELF is not 64-bit");
  if (ehdr.ident[5] != kDataLittle) return elf.error("the kernel ELF is not little-endian");
  if (ehdr.machine != kMachineX86_64)
    return elf.error("the kernel ELF is for machine " + std::to_string(ehdr.machine) + ", not x86-64");

  const uint64_t size = elf_bytes.size();
  uint64_t extent = std::max<uint64_t>(sizeof(Ehdr), ehdr.ehsize);
  // Each piece must lie inside the data; the extent is the end of the furthest one.
  auto cover = [&](uint64_t offset, uint64_t bytes, const std::string& what) -> std::optional<Error> {
    if (!fits(offset, bytes, size))
      return elf.error("the kernel ELF is truncated: it has " + std::to_string(size) + " bytes but needs " +
                       hex(offset) + " + " + std::to_string(bytes) + " for its " + what);
    extent = std::max(extent, offset + bytes);
    return std::nullopt;
  };
  if (auto e = cover(0, extent, "file header")) return *e;

  if (ehdr.phnum != 0) {
    if (ehdr.phentsize < sizeof(Phdr))
      return elf.error("the kernel ELF's program header size " + std::to_string(ehdr.phentsize) + " is too small");
    if (auto e = cover(ehdr.phoff, uint64_t{ehdr.phnum} * ehdr.phentsize, "program headers")) return *e;
    for (uint64_t i = 0; i < ehdr.phnum; ++i) {
      const auto phdr = get<Phdr>(elf_bytes, ehdr.phoff + i * ehdr.phentsize);
      if (phdr.type != kPtLoad) continue;
      if (auto e = cover(phdr.offset, phdr.filesz, "segment " + std::to_string(i))) return *e;
    }
  }

  if (ehdr.shoff != 0) {
    if (ehdr.shentsize < sizeof(Shdr))
      return elf.error("the kernel ELF's section header size " + std::to_string(ehdr.shentsize) + " is too small");
    if (auto e = cover(ehdr.shoff, ehdr.shentsize, "section header 0")) return *e;
    // With 0xFF00 or more sections, e_shnum is 0 and section 0's size holds the count.
    uint64_t shnum = ehdr.shnum;
    if (shnum == elf::kShnUndef) shnum = get<Shdr>(elf_bytes, ehdr.shoff).size;
    if (shnum > size / ehdr.shentsize) return elf.error("the kernel ELF claims " + std::to_string(shnum) + " sections");
    if (auto e = cover(ehdr.shoff, shnum * ehdr.shentsize, "section headers")) return *e;
    for (uint64_t i = 0; i < shnum; ++i) {
      const auto shdr = get<Shdr>(elf_bytes, ehdr.shoff + i * ehdr.shentsize);
      if (shdr.type == elf::kShtNobits) continue;
      if (auto e = cover(shdr.offset, shdr.size, "section " + std::to_string(i))) return *e;
    }
  }
  return extent;
}

Result<KernelPayload> extract_kernel(const PackedPayload& image, const FileView& view, uint64_t max_output) {
  std::span<const uint8_t> file = view.bytes;
  if (!fits(image.payload_offset, image.payload_size, file.size())) return view.error("payload lies outside the file");
  std::vector<uint8_t> data =
      KPACK_TRY_RESULT(decode_stream(image.format, view.part(image.payload_offset, image.payload_size), max_output));
  if (image.packer_record && image.packer_record->codec != static_cast<uint32_t>(Codec::kRaw))
    KPACK_TRY_RESULT(check_and_uncode_frames(image, view, data));
  uint64_t extent = KPACK_TRY_RESULT(elf_file_extent({data, view.name}));

  KernelPayload kernel;
  if (image.packer_record && (image.packer_record->flags & kRecordRelocationPlanes)) {
    kernel.relocation_table.resize(data.size() - extent);
    decode_relocation_planes(data.data() + extent, data.size() - extent, kernel.relocation_table.data());
  } else {
    kernel.relocation_table.assign(data.begin() + static_cast<ptrdiff_t>(extent), data.end());
  }
  data.resize(extent);
  kernel.elf = std::move(data);
  // A raw payload leaves long zero runs out of its segments (layout.h): the vmlinux gets them back.
  if (image.packer_record && image.packer_record->codec == static_cast<uint32_t>(Codec::kRaw))
    kernel.elf = join_left_out_zeros(std::move(kernel.elf), max_output);
  return kernel;
}

}  // namespace kpack
