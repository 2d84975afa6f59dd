#include "packer/input/pe_view.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "formats/pe.h"
#include "packer/base/byte_io.h"

namespace kpack {

Result<StubLayout> read_stub_layout(const FileView& stub_file) {
  std::span<const uint8_t> stub = stub_file.bytes;
  if (stub.size() < kStubLayoutOffset + sizeof(StubLayout)) return stub_file.error("internal error: stub too small");
  StubLayout layout = get<StubLayout>(stub, kStubLayoutOffset);
  bool sane = std::memcmp(layout.magic, kStubLayoutMagic, sizeof(layout.magic)) == 0 &&
              layout.rodata_start % kPeSectionAlignment == 0 && layout.data_start % kPeSectionAlignment == 0 &&
              layout.rodata_start <= layout.data_start && layout.data_start <= stub.size() &&
              layout.efi_entry < layout.rodata_start && layout.handover_entry < layout.rodata_start &&
              layout.handover_entry >= 0x200 && layout.pvh_entry < layout.rodata_start;
  if (!sane) return stub_file.error("internal error: the stub's layout block is missing or damaged");
  return layout;
}

Result<std::optional<PeView>> read_pe_view(const FileView& image) {
  std::span<const uint8_t> file = image.bytes;
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
    return image.error("PE header: optional header truncated");
  OptionalHeader64 o{};
  std::memcpy(&o, file.data() + optional_offset, std::min<uint64_t>(coff.size_of_optional_header, sizeof(o)));
  if (o.magic != kPe32PlusMagic) return image.error("PE header: not PE32+ (magic " + std::to_string(o.magic) + ")");
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
    return image.error("PE header: section table truncated");
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
