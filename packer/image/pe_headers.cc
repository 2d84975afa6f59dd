#include "packer/image/pe_headers.h"

#include <algorithm>
#include <cstring>

#include "packer/base/byte_io.h"
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

Status write_pe_headers(const Context& ctx, std::vector<uint8_t>& image, const PeInput& in) {
  using namespace pe;
  const uint64_t pm_file = in.setup_size;
  const bool hole_fits =
      in.hole.empty() ||
      (in.hole.begin % kPeSectionAlignment == 0 && in.hole.end % kPeSectionAlignment == 0 &&
       align_up(in.payload_offset, kPeSectionAlignment) < in.hole.begin && in.hole.end < in.image_size);
  if (pm_file < kPeHeadersSize || pm_file % kPeSectionAlignment || in.payload_offset < in.stub.data_start ||
      in.image_size < in.payload_offset || in.memory_size < in.image_size ||
      image.size() < pm_file + align_up(in.image_size, kPeFileAlignment) || !hole_fits)
    return ctx.about_output("internal error: image not laid out for PE sections");
  uint64_t end_rva = 0;
  std::vector<SectionHeader> sections = section_table(in, end_rva);
  if (end_rva > 0xFFFFFFFFull) return ctx.about_output("image too large for a PE file's 32-bit sizes");
  const uint64_t table_end = kNtHeadersOffset + sizeof(NtHeaders) + sections.size() * sizeof(SectionHeader);
  if (table_end > boot::kSetupHeaderOffset)
    return ctx.about_output("internal error: PE section table overlaps the setup header");
  // The DOS stub's fields a PE loader and Linux's tools read, then the headers and the section table.
  put(image, 0, kDosMagic);
  put(image, kLinuxPeMagicOffset, ul32{kLinuxPeMagic});
  put(image, kDosNewHeaderOffset, ul32{kNtHeadersOffset});
  put(image, kNtHeadersOffset, nt_headers(in, sections, end_rva));
  for (size_t i = 0; i < sections.size(); ++i)
    put(image, kNtHeadersOffset + sizeof(NtHeaders) + i * sizeof(SectionHeader), sections[i]);
  return Ok{};
}

}  // namespace kpack
