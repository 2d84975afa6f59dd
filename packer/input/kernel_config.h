// A kernel's configuration and System.map, read for what a vmlinux without symbols does not say
// (packer/input/kernel_facts.h): whether it runs with 5-level paging, and whether they belong to it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "packer/input/kernel_facts.h"
#include "stub/unpack/kernel_headers.h"

namespace kpack {

// The configuration CONFIG_IKCONFIG embeds in the kernel: gzip data between the markers "IKCFG_ST"
// and "IKCFG_ED" (kernel/configs.c); nothing when there is none, or it does not decode.
std::optional<std::string> embedded_config(std::span<const uint8_t> elf);

// From a configuration's text: 5-level paging with the line that says so. CONFIG_PGTABLE_LEVELS
// (5 or 4; the only word from Linux 6.16, which made 5-level paging unconditional), else
// CONFIG_X86_5LEVEL; an x86-64 configuration with neither predates 5-level paging. Nothing for a
// text that is not an x86-64 kernel's configuration (no CONFIG_X86_64=y).
std::optional<Finding> five_level_from_config(std::string_view config);

// "6.1" from a configuration's header ("# Linux/x86 6.1.192 Kernel Configuration").
std::optional<std::string> config_series(std::string_view config);

// "6.1" from a kernel release ("6.1.0-57-cloud-amd64"): what a configuration's header and the
// kernel's banner have in common (Debian's releases keep an ABI number where the sublevel was).
std::string release_series(std::string_view release);

struct SystemMap {
  std::optional<uint64_t> linux_banner;  // the banner's address, which ties the map to its kernel
  bool pgtable_l5_enabled = false;       // defined by kernels with 5-level paging
};

// The symbols kpack looks for in a System.map's "ADDRESS TYPE NAME" lines.
SystemMap read_system_map(std::string_view text);

// The virtual addresses of the "Linux version " strings the kernel's segments hold.
std::vector<uint64_t> banner_addresses(std::span<const uint8_t> elf, const KernelHeaders& kernel);

}  // namespace kpack
