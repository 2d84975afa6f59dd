// Reads kpack's ELF output (formats/kpack_elf.h) back: its ELF view for `kpack info`, and where its
// protected-mode part and payload lie, for extract_kernel, repacking and the placement report.
// Like the bzImage reader it distrusts the file: every offset and size is checked before use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/elf64.h"
#include "formats/kpack_image.h"
#include "packer/input/bzimage_reader.h"
#include "packer/base/result.h"

namespace kpack {

struct KpackElf {
  elf::Ehdr ehdr;
  std::vector<elf::Phdr> phdrs;  // as in the file
  elf::Phdr load;                // the one PT_LOAD: the protected-mode part
  uint64_t pvh_entry = 0;        // from Xen's PHYS32_ENTRY note
  uint64_t notes = 0;            // how many notes the PT_NOTE segments hold
  StubLayout stub;               // the stub's layout block, from the segment
  PackedPayload payload;         // protected_offset = load.offset; the record is always there

  std::span<const uint8_t> protected_part(std::span<const uint8_t> file) const {
    return file.subspan(load.offset, load.filesz);
  }
};

// True when `file` starts with the ELF magic: what `kpack info` and `kpack extract` read as a kpack
// ELF, so that a damaged one gets the ELF reader's error.
bool looks_like_elf(std::span<const uint8_t> file);

// True when `file` is an ELF file with kpack's note, whatever else is wrong with it: an input that
// repacking reads as kpack's ELF output, not as a vmlinux (which has no such note).
bool looks_like_kpack_elf(std::span<const uint8_t> file);

// Validates the file (headers, notes, the stub's entries against them, the kpack record) and
// locates the payload.
Result<KpackElf> read_kpack_elf(const FileView& file);

}  // namespace kpack
