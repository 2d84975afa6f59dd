// What kind of file an input is, for errors that say what was found and what was expected, and
// whether it is shorter than its own headers say (a truncated download or copy).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

enum class InputKind { kEmpty, kText, kVmlinux, kOtherElf, kBzImage, kKpackImage, kCompressed, kData };

InputKind classify_input(std::span<const uint8_t> file);

// "an empty file", "text", "a vmlinux ELF", "a bzImage", "gzip data", ...
std::string describe_input(std::span<const uint8_t> file);

// "NAME: is KIND, not EXPECTED" (EXPECTED: "a vmlinux ELF or a bzImage", say).
Error wrong_kind(const FileView& file, const std::string& expected);

// The size an ELF file's headers give it: its ELF header, program headers and section headers and
// the segments' bytes; nothing when the ELF header is not a 64-bit little-endian one.
std::optional<uint64_t> elf_claimed_size(std::span<const uint8_t> file);

// "NAME: file truncated: N of M bytes" when the file is shorter than the `claimed` size.
Status check_not_truncated(const FileView& file, uint64_t claimed);

}  // namespace kpack
