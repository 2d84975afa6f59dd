#include "packer/pe_image.h"

#include <algorithm>
#include <cstring>

#include "packer/byte_io.h"
#include "formats/boot_params.h"
#include "formats/pe.h"
#include "stub/base/range.h"

namespace kpack {
namespace {

constexpr uint32_t kNtHeadersOffset = 0x40;

pe::SectionHeader section(const char* name, uint64_t rva, uint64_t virtual_size, uint64_t raw_offset, uint64_t raw_size,
                          uint32_t characteristics) {
  pe::SectionHeader s{};
  std::memcpy(s.name, name, std::min(std::strlen(name), sizeof(s.name)));
  s.virtual_size = static_cast<uint32_t>(virtual_size);
  s.virtual_address = static_cast<uint32_t>(rva);
  s.size_of_raw_data = static_cast<uint32_t>(raw_size);
  s.pointer_to_raw_data = static_cast<uint32_t>(raw_offset);
  s.characteristics = characteristics;
  return s;
}

}  // namespace

Result<StubLayout> read_stub_layout(std::span<const uint8_t> stub, const std::string& name) {
  if (stub.size() < kStubLayoutOffset + sizeof(StubLayout)) return error_in(name, "internal error: stub too small");
  StubLayout layout = get<StubLayout>(stub, kStubLayoutOffset);
  bool sane = std::memcmp(layout.magic, kStubLayoutMagic, sizeof(layout.magic)) == 0 &&
              layout.rodata_start % kPeSectionAlignment == 0 && layout.data_start % kPeSectionAlignment == 0 &&
              layout.rodata_start <= layout.data_start && layout.data_start <= stub.size() &&
              layout.efi_entry < layout.rodata_start && layout.handover_entry < layout.rodata_start &&
              layout.handover_entry >= 0x200 && layout.pvh_entry < layout.rodata_start;
  if (!sane) return error_in(name, "internal error: the stub's layout block is missing or damaged");
  return layout;
}

namespace {

// The sections, each one's RVA its file offset (the protected-mode part starts on a page), as in
// stock images: the PE mapping is the file, so loaders that map sections and loaders that copy the
// file flat (systemd-stub 252) both run the position-independent stub as it lies in the file.
// `end_rva` becomes SizeOfImage.
std::vector<pe::SectionHeader> section_table(const PeInput& in, uint64_t& end_rva) {
  using namespace pe;
  const uint64_t pm = in.setup_size;
  // The writable section runs from the stub's data to the page after the record and kernel_info
  // (the stub's bss shares a page with them and, for compressed images, with the payload's first
  // bytes); the payload's remaining pages are read-only.
  const uint64_t payload_page =
      std::min(align_up(in.payload_offset, kPeSectionAlignment), align_up(in.image_size, kPeFileAlignment));
  std::vector<SectionHeader> sections;
  if (pm > kPeHeadersSize)  // the 16-bit setup: never run under EFI, but covered by the signature
    sections.push_back(section(".setup", kPeHeadersSize, pm - kPeHeadersSize, kPeHeadersSize, pm - kPeHeadersSize,
                               kSectionInitializedData | kSectionRead | kSectionDiscardable));
  sections.push_back(section(".text", pm, in.stub.rodata_start, pm, in.stub.rodata_start,
                             kSectionCode | kSectionExecute | kSectionRead));
  sections.push_back(section(".rodata", pm + in.stub.rodata_start, in.stub.data_start - in.stub.rodata_start,
                             pm + in.stub.rodata_start, in.stub.data_start - in.stub.rodata_start,
                             kSectionInitializedData | kSectionRead));
  sections.push_back(section(".data", pm + in.stub.data_start, payload_page - in.stub.data_start,
                             pm + in.stub.data_start, payload_page - in.stub.data_start,
                             kSectionInitializedData | kSectionRead | kSectionWrite));
  // An in-place raw payload's hole splits it: its ELF headers, then the kernel's segments and
  // relocations. The last section runs on in memory to memory_size, past its bytes in the file (a
  // raw kernel's bss).
  auto read_only = [&](const char* name, uint64_t begin, uint64_t file_end, uint64_t memory_end) {
    sections.push_back(section(name, pm + begin, memory_end - begin, pm + begin,
                               align_up(file_end - begin, kPeFileAlignment), kSectionInitializedData | kSectionRead));
  };
  if (!in.hole.empty()) {
    read_only(".payload", payload_page, in.hole.begin, in.hole.begin);
    read_only(".kernel", in.hole.end, in.image_size, in.memory_size);
  } else if (in.image_size > payload_page) {
    read_only(".payload", payload_page, in.image_size, in.memory_size);
  }
  end_rva = align_up(pm + in.memory_size, kPeSectionAlignment);
  if (in.sbat_size) {
    sections.push_back(section(".sbat", end_rva, in.sbat_size, in.sbat_offset, align_up(in.sbat_size, kPeFileAlignment),
                               kSectionInitializedData | kSectionRead | kSectionDiscardable));
    end_rva = align_up(end_rva + in.sbat_size, kPeSectionAlignment);
  }
  return sections;
}

// The COFF and optional headers of an EFI application whose entry is the stub's EFI entry.
pe::NtHeaders nt_headers(const PeInput& in, const std::vector<pe::SectionHeader>& sections, uint64_t end_rva) {
  using namespace pe;
  NtHeaders nt{};
  nt.signature = kSignature;
  nt.coff.machine = kMachineAmd64;
  nt.coff.number_of_sections = static_cast<uint16_t>(sections.size());
  nt.coff.size_of_optional_header = sizeof(OptionalHeader64);
  nt.coff.characteristics = kExecutableImage | kLineNumsStripped | kDebugStripped;
  OptionalHeader64& o = nt.optional;
  o.magic = kPe32PlusMagic;
  o.size_of_code = in.stub.rodata_start;
  uint64_t data_bytes = 0;
  for (const SectionHeader& s : sections)
    if (!(uint32_t{s.characteristics} & kSectionCode)) data_bytes += s.size_of_raw_data;
  o.size_of_initialized_data = static_cast<uint32_t>(data_bytes);
  o.address_of_entry_point = static_cast<uint32_t>(in.setup_size + in.stub.efi_entry);
  o.base_of_code = static_cast<uint32_t>(in.setup_size);
  o.image_base = 0;
  o.section_alignment = kPeSectionAlignment;
  o.file_alignment = kPeFileAlignment;
  o.major_image_version = kImageInitrdLoadFile2 | kImageInitrdCommandLine;
  o.size_of_image = static_cast<uint32_t>(end_rva);
  o.size_of_headers = kPeHeadersSize;
  o.subsystem = kSubsystemEfiApplication;
  o.dll_characteristics = kDllNxCompat;
  o.number_of_rva_and_sizes = kDirectoryCount;
  return nt;
}

}  // namespace

Status write_pe_headers(std::vector<uint8_t>& image, const PeInput& in, const std::string& name) {
  using namespace pe;
  const uint64_t pm_file = in.setup_size;
  const bool hole_fits =
      in.hole.empty() ||
      (in.hole.begin % kPeSectionAlignment == 0 && in.hole.end % kPeSectionAlignment == 0 &&
       align_up(in.payload_offset, kPeSectionAlignment) < in.hole.begin && in.hole.end < in.image_size);
  if (pm_file < kPeHeadersSize || pm_file % kPeSectionAlignment || in.payload_offset < in.stub.data_start ||
      in.image_size < in.payload_offset || in.memory_size < in.image_size ||
      image.size() < pm_file + align_up(in.image_size, kPeFileAlignment) || !hole_fits)
    return error_in(name, "internal error: image not laid out for PE sections");
  uint64_t end_rva = 0;
  std::vector<SectionHeader> sections = section_table(in, end_rva);
  if (end_rva > 0xFFFFFFFFull) return error_in(name, "image too large for a PE file's 32-bit sizes");
  const uint64_t table_end = kNtHeadersOffset + sizeof(NtHeaders) + sections.size() * sizeof(SectionHeader);
  if (table_end > boot::kSetupHeaderOffset)
    return error_in(name, "internal error: PE section table overlaps the setup header");
  // The DOS stub's fields a PE loader and Linux's tools read, then the headers and the section table.
  put(image, 0, kDosMagic);
  put(image, kLinuxPeMagicOffset, ul32{kLinuxPeMagic});
  put(image, kDosNewHeaderOffset, ul32{kNtHeadersOffset});
  put(image, kNtHeadersOffset, nt_headers(in, sections, end_rva));
  for (size_t i = 0; i < sections.size(); ++i)
    put(image, kNtHeadersOffset + sizeof(NtHeaders) + i * sizeof(SectionHeader), sections[i]);
  return Ok{};
}

Result<std::optional<PeView>> read_pe_view(std::span<const uint8_t> file, const std::string& name) {
  using namespace pe;
  if (file.size() < 0x40 || get<ul16>(file, 0) != kDosMagic) return std::optional<PeView>{};
  uint64_t nt_offset = get<ul32>(file, kDosNewHeaderOffset);
  if (nt_offset + sizeof(ul32) + sizeof(CoffHeader) > file.size() || get<ul32>(file, nt_offset) != kSignature)
    return std::optional<PeView>{};
  CoffHeader coff = get<CoffHeader>(file, nt_offset + 4);
  uint64_t optional_offset = nt_offset + 4 + sizeof(CoffHeader);
  // Enough of the optional header for the fields shown; fewer directories than ours are allowed.
  constexpr uint64_t kMinOptional = offsetof(OptionalHeader64, directories);
  if (coff.size_of_optional_header < kMinOptional || optional_offset + coff.size_of_optional_header > file.size())
    return error_in(name, "PE header: optional header truncated");
  OptionalHeader64 o{};
  std::memcpy(&o, file.data() + optional_offset, std::min<uint64_t>(coff.size_of_optional_header, sizeof(o)));
  if (o.magic != kPe32PlusMagic) return error_in(name, "PE header: not PE32+ (magic " + std::to_string(o.magic) + ")");
  PeView view;
  view.machine = coff.machine;
  view.subsystem = o.subsystem;
  view.dll_characteristics = o.dll_characteristics;
  view.major_image_version = o.major_image_version;
  view.entry = o.address_of_entry_point;
  view.size_of_image = o.size_of_image;
  view.size_of_headers = o.size_of_headers;
  uint32_t directories = std::min<uint32_t>(o.number_of_rva_and_sizes, kDirectoryCount);
  uint64_t directories_in_header = (coff.size_of_optional_header - kMinOptional) / sizeof(DataDirectory);
  if (directories > kDirectorySecurity && directories_in_header > kDirectorySecurity) {
    view.signature_offset = o.directories[kDirectorySecurity].virtual_address;
    view.signature_size = o.directories[kDirectorySecurity].size;
  }
  uint64_t table = optional_offset + coff.size_of_optional_header;
  if (table + uint64_t{coff.number_of_sections} * sizeof(SectionHeader) > file.size())
    return error_in(name, "PE header: section table truncated");
  for (uint32_t i = 0; i < coff.number_of_sections; ++i) {
    SectionHeader s = get<SectionHeader>(file, table + i * sizeof(SectionHeader));
    PeSection out;
    out.name.assign(s.name, strnlen(s.name, sizeof(s.name)));
    out.virtual_address = s.virtual_address;
    out.virtual_size = s.virtual_size;
    out.raw_offset = s.pointer_to_raw_data;
    out.raw_size = s.size_of_raw_data;
    out.characteristics = s.characteristics;
    view.sections.push_back(out);
  }
  return std::optional<PeView>{view};
}

}  // namespace kpack
