// The kernel to pack: a vmlinux ELF read from a file, or the one inside any bzImage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel_headers.h"
#include "result.h"

namespace kpack {

struct KernelInput {
  std::vector<uint8_t> elf;
  std::vector<uint8_t> relocs;       // the relocation table a stock image carries after the ELF
  KernelHeaders kernel;                // parsed and validated program headers
  std::optional<uint32_t> cmdline_size;  // from the source bzImage, when there was one
  std::optional<std::string> version;    // for the header's kernel_version string
};

// Validates an ELF held in memory. `name` is the file, for messages.
Result<KernelHeaders> parse_vmlinux(const std::vector<uint8_t>& elf, const std::string& name);

// Validates `elf` and wraps it, with no relocations, version or command-line size yet.
Result<KernelInput> kernel_input_from_elf(std::vector<uint8_t> elf, const std::string& name);

// Reads `path`: a vmlinux, or a bzImage (stock or kpack) whose kernel is extracted.
Result<KernelInput> load_kernel(const std::string& path);

}  // namespace kpack
