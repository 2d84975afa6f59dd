// Writes kpack's ELF output (formats/kpack_elf.h): the protected-mode part of a kpack image as the
// one PT_LOAD of an ELF64 executable, at a physical address chosen here, with Xen's PVH note and
// e_entry at the 64-bit boot-protocol entry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "packer/image/image_writer.h"
#include "packer/base/result.h"

namespace kpack {

// Why the image lies where it does (doc/image-format.md, "ELF"):
enum class ElfPlacement {
  kKernelInPlace,  // raw: the first kernel segment is loaded where it runs, on the kernel's floor
  kBelowFloor,     // compressed: the whole image below the kernel's floor, as much RAM as stock
  kAboveKernel,    // it does not fit below: above the floor plus the kernel's span, more RAM
};
const char* elf_placement_name(ElfPlacement placement);

struct ElfLoad {
  uint64_t address = 0;      // p_paddr = p_vaddr of the PT_LOAD, 4 KiB-aligned
  uint64_t file_offset = 0;  // p_offset: past the header page, congruent to address modulo 2 MiB
  ElfPlacement placement = ElfPlacement::kBelowFloor;
};

// Where the protected-mode part goes: the kernel runs at `floor` (nokaslr) and needs `kernel_span`
// bytes from there; `raw` images are placed so that their first segment lies on the floor.
ElfLoad choose_elf_load(const ProtectedPart& part, bool raw, uint64_t floor, uint64_t kernel_span);

struct ElfImage {
  std::vector<uint8_t> bytes;
  ElfLoad load;
};

// The ELF file for `input`; errors name the context's output.
Result<ElfImage> build_elf_image(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                 const ImageBlobs& blobs);

}  // namespace kpack
