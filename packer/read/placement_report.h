// kpack info's placement section: where the stub would put the kernel for a few load addresses,
// found by running the stub's own engine (unpack_kernel) on a simulated machine.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>

#include "packer/input/bzimage_reader.h"

namespace kpack {

// `file` is the whole kpack image and `image` what read_bzimage made of it (image.packer_record is set).
// The machine the boot tests use (QEMU -m 512M); its RAM is taken as one e820 entry from 1 MiB.
inline constexpr uint64_t kPlacementRamSize = 512ull << 20;

void print_placement_report(const BzImage& image, std::span<const uint8_t> file, std::FILE* out,
                            uint64_t ram_size = kPlacementRamSize);

// The report's heading, then one line per load address of `protected_part` (the bytes a loader puts
// there; image.packer_record is set), as print_placement_report prints them: for images that go to one
// address only, such as kpack's ELF output.
void print_placement_heading(std::FILE* out, uint64_t ram_size = kPlacementRamSize);
void print_placement_at(const PackedPayload& image, std::span<const uint8_t> protected_part, uint64_t load,
                        const char* label, std::FILE* out, uint64_t ram_size = kPlacementRamSize);

}  // namespace kpack
