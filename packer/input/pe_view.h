// Reading the PE/COFF view of an image (formats/pe.h) for `kpack info` and the input checks, and the
// stub blob's layout block, which places the stub's PE sections.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/kpack_image.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

// Sections start on a page: kpack writes them so, and the stub blob's sections must be laid out so.
inline constexpr uint32_t kPeSectionAlignment = 0x1000;

// The stub blob's layout block (formats/kpack_image.h), checked.
Result<StubLayout> read_stub_layout(const FileView& stub_file);

struct PeSection {
  std::string name;
  uint32_t virtual_address = 0, virtual_size = 0, raw_offset = 0, raw_size = 0, characteristics = 0;
};
struct PeView {
  uint16_t machine = 0, subsystem = 0, dll_characteristics = 0, major_image_version = 0;
  uint32_t entry = 0, size_of_image = 0, size_of_headers = 0;
  uint32_t signature_offset = 0, signature_size = 0;  // the certificate table (0: unsigned)
  std::vector<PeSection> sections;
};
// The PE view of `file`, or nothing when it has no PE header; an error when the header is damaged.
Result<std::optional<PeView>> read_pe_view(const FileView& image);

}  // namespace kpack
