// The PE/COFF view of a kpack image (formats/pe.h): written over the unused boot sector so the image
// is an EFI application as well as a boot-protocol image (input/pe_view.h reads it back).
#pragma once

#include <cstdint>
#include <vector>

#include "packer/base/context.h"
#include "packer/base/result.h"
#include "packer/input/pe_view.h"
#include "stub/base/range.h"

namespace kpack {

// The first page of the file is the PE headers' (it holds the setup header at 0x1F1 too).
inline constexpr uint32_t kPeHeadersSize = 0x1000;
inline constexpr uint32_t kPeFileAlignment = 0x200;

struct PeInput {
  uint64_t setup_size = 0;      // bytes before the protected-mode part (a multiple of 4096)
  StubLayout stub;              // offsets inside the protected-mode part
  uint64_t payload_offset = 0;  // the payload's offset in the protected-mode part
  uint64_t image_size = 0;      // bytes of the protected-mode part, payload included
  // Bytes of the protected-mode part once loaded: image_size, or for a raw payload the boot
  // protocol's init_size, through the kernel's bss that the file leaves out (the loader zeroes it).
  uint64_t memory_size = 0;
  uint64_t sbat_offset = 0;  // file offset of the .sbat bytes (0: none)
  uint64_t sbat_size = 0;
  // Pages of the payload no section covers, as offsets in the protected-mode part: an in-place raw
  // payload's zeros between its ELF headers and the kernel's first segment, there only so that a
  // loader putting the protected-mode part at 1 MiB puts the kernel at its floor. A PE loader
  // leaves them out (the firmware neither copies nor hashes them; nothing reads them). Empty: none.
  Range hole;
};

// Writes the MZ header, the PE headers and the section table into `image`, which already holds
// every byte the sections cover.
Status write_pe_headers(const Context& ctx, std::vector<uint8_t>& image, const PeInput& input);

}  // namespace kpack
