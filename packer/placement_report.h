// kpack info's placement section: where the stub would put the kernel for a few load addresses,
// found by running the stub's own engine (unpack_kernel) on a simulated machine.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>

#include "packer/bzimage_reader.h"

namespace kpack {

// `file` is the whole kpack image and `image` what read_bzimage made of it (image.kpack is set).
// The machine the boot tests use (QEMU -m 512M); its RAM is taken as one e820 entry from 1 MiB.
inline constexpr uint64_t kPlacementRamSize = 512ull << 20;

void print_placement_report(const BzImage& image, std::span<const uint8_t> file, std::FILE* out,
                            uint64_t ram_size = kPlacementRamSize);

}  // namespace kpack
