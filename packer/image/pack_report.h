// What `kpack` says about a pack besides errors: the warnings (once each, after the image is
// written) and, with -v, what it found out about the kernel and how the image is laid out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "packer/image/elf_writer.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"

namespace kpack {

// What to warn of about the context's input, added to its warnings: one line each, without
// "kpack: " and the newline.
void add_pack_warnings(Context& ctx, const KernelInput& input);

// -v: the kernel's findings, its relocation table and how the output was compressed and laid out;
// `elf_load` says where an ELF output (--elf) is loaded, and is empty for a bzImage.
std::vector<std::string> pack_details(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                      std::span<const uint8_t> image, const std::optional<ElfLoad>& elf_load);

}  // namespace kpack
