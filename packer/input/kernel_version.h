// The kernel's version string, which a bzImage carries in its setup code at 0x200 + kernel_version
// for tools that identify kernels without booting them (file, kernel-install, boot menus).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "formats/boot_params.h"

namespace kpack {

inline constexpr size_t kMaxVersionLength = 511;

// The string a bzImage points at, when it points inside its setup sectors at a terminated string.
std::optional<std::string> version_from_bzimage(std::span<const uint8_t> file, const boot::SetupHeader& header,
                                                uint64_t setup_size);

// From the vmlinux's linux_banner, "Linux version RELEASE (USER@HOST) (COMPILER) VERSION\n",
// the kernel's own format without the compiler: "RELEASE (USER@HOST) VERSION".
std::optional<std::string> version_from_banner(std::span<const uint8_t> elf);

}  // namespace kpack
