#include "packer/input/input_kind.h"

#include <algorithm>
#include <cstring>

#include "formats/boot_params.h"
#include "formats/elf64.h"
#include "formats/kpack_image.h"
#include "packer/base/byte_io.h"
#include "packer/codecs/codecs.h"
#include "stub/unpack/kernel_headers.h"

namespace kpack {

namespace {

// Printable ASCII, whitespace and UTF-8's high bytes: what an editor or a shell leaves in a file.
bool looks_like_text(std::span<const uint8_t> file) {
  auto start = file.first(std::min<size_t>(file.size(), 4096));
  return std::all_of(start.begin(), start.end(),
                     [](uint8_t c) { return c >= 0x20 ? c != 0x7F : c == '\n' || c == '\t' || c == '\r'; });
}

bool has_elf_magic(std::span<const uint8_t> file) {
  return file.size() >= sizeof(elf::kMagic) && std::memcmp(file.data(), elf::kMagic, sizeof(elf::kMagic)) == 0;
}

// Where a kpack image keeps its record (formats/kpack_image.h), when the file is long enough to say.
bool has_packer_record(std::span<const uint8_t> file) {
  if (file.size() < boot::kSetupHeaderEnd) return false;
  const auto header = get<boot::SetupHeader>(file, boot::kSetupHeaderOffset);
  const uint64_t setup_sects = header.setup_sects == 0 ? boot::kDefaultSetupSects : header.setup_sects;
  const uint64_t kernel_info = header.kernel_info_offset;
  if (header.version < 0x020F || kernel_info < sizeof(PackerRecord)) return false;
  const uint64_t at = (setup_sects + 1) * boot::kSectorSize + packer_record_offset(kernel_info);
  return at + sizeof(kPackerRecordMagic) <= file.size() &&
         std::memcmp(file.data() + at, kPackerRecordMagic, sizeof(kPackerRecordMagic)) == 0;
}

// a + b, or nothing when it overflows: a size that wraps is no size a file could have.
std::optional<uint64_t> sum(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? std::nullopt : std::optional<uint64_t>(a + b);
}

}  // namespace

InputKind classify_input(std::span<const uint8_t> file) {
  if (file.empty()) return InputKind::kEmpty;
  if (has_elf_magic(file)) {
    bool x86_64 = file.size() >= sizeof(elf::Ehdr) && get<elf::Ehdr>(file, 0).machine == elf::kMachineX86_64;
    return x86_64 ? InputKind::kVmlinux : InputKind::kOtherElf;
  }
  if (file.size() >= 0x206 && get<ul32>(file, 0x202) == boot::kHeaderMagic)
    return has_packer_record(file) ? InputKind::kKpackImage : InputKind::kBzImage;
  std::optional<StreamFormat> format = detect_stream_format(file);
  if (format && *format != StreamFormat::kRaw) return InputKind::kCompressed;
  return looks_like_text(file) ? InputKind::kText : InputKind::kData;
}

std::string describe_input(std::span<const uint8_t> file) {
  switch (classify_input(file)) {
    case InputKind::kEmpty: return "an empty file";
    case InputKind::kText: return "text";
    case InputKind::kVmlinux: return "a vmlinux ELF";
    case InputKind::kOtherElf: return "an ELF file for another machine";
    case InputKind::kBzImage: return "a bzImage";
    case InputKind::kKpackImage: return "a kpack image";
    case InputKind::kCompressed:
      return std::string(stream_format_name(*detect_stream_format(file))) + " data (decompress it first)";
    case InputKind::kData: break;
  }
  std::string first;
  for (size_t i = 0; i < std::min<size_t>(file.size(), 4); ++i) first += (i ? " " : "") + hex(file[i]);
  return "data of no known kind (first bytes " + first + ")";
}

Error wrong_kind(const FileView& file, const std::string& expected) {
  return file.error("is " + describe_input(file.bytes) + ", not " + expected);
}

std::optional<uint64_t> elf_claimed_size(std::span<const uint8_t> file) {
  using namespace elf;
  if (!has_elf_magic(file)) return std::nullopt;
  if (file.size() < sizeof(Ehdr)) return sizeof(Ehdr);
  const auto ehdr = get<Ehdr>(file, 0);
  if (ehdr.ident[4] != kClass64 || ehdr.ident[5] != kDataLittle) return std::nullopt;
  uint64_t claimed = sizeof(Ehdr);
  auto cover = [&](uint64_t offset, uint64_t size) {
    if (std::optional<uint64_t> end = sum(offset, size)) claimed = std::max(claimed, *end);
  };
  // Header counts the parser would refuse anyway are its to report, not a size to claim.
  const bool sane_phdrs = ehdr.phnum >= 1 && ehdr.phnum <= kMaxProgramHeaders && ehdr.phentsize == sizeof(Phdr);
  const uint64_t phsize = uint64_t{ehdr.phnum} * ehdr.phentsize;
  if (sane_phdrs) cover(ehdr.phoff, phsize);
  if (ehdr.shoff && ehdr.shentsize == sizeof(Shdr)) cover(ehdr.shoff, uint64_t{ehdr.shnum} * ehdr.shentsize);
  // The segments whose headers the file holds.
  if (sane_phdrs && sum(ehdr.phoff, phsize) && ehdr.phoff + phsize <= file.size())
    for (uint64_t i = 0; i < ehdr.phnum; ++i) {
      const auto phdr = get<Phdr>(file, ehdr.phoff + i * ehdr.phentsize);
      cover(phdr.offset, phdr.filesz);
    }
  return claimed;
}

Status check_not_truncated(const FileView& file, uint64_t claimed) {
  if (file.bytes.size() >= claimed) return Ok{};
  return file.error("file truncated: " + std::to_string(file.bytes.size()) + " of " + std::to_string(claimed) +
                    " bytes");
}

}  // namespace kpack
