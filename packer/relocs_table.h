// The x86-64 kernel's relocation table (kbuild's arch/x86/boot/compressed/vmlinux.relocs, which a
// stock bzImage carries in its payload right after the ELF), in memory and on disk.
//
// On disk: little-endian u32 words, each the low 32 bits of a link-time virtual address to patch
// (sign-extended to 64 bits when used), in lists sorted ascending and each preceded by a 0 word:
//
//   up to 6.14:  0, 64-bit list, 0, inverse-32 list, 0, 32-bit list       (3 zero words)
//   6.15 on:     0, 64-bit list, 0, 32-bit list                           (2 zero words)
//
// ("x86/boot/64: Remove inverse relocations" dropped the inverse list along with the zero-based
// per-CPU section it served.) Entries are never 0, so the number of zero words gives the format.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stub/unpack/relocation_table.h"
#include "packer/result.h"

namespace kpack {

// The table as the packer builds and checks it: each list's entries copied out, to sort, count and
// encode. (The stub reads a table in place: the engine's RelocationTable holds only where each list
// lies, stub/unpack/relocation_table.h, whose RelocationFormat tells the two formats apart.)
struct RelocationLists {
  RelocationFormat format = RelocationFormat::kWithoutInverse32;
  std::vector<uint32_t> relocs64;   // R_X86_64_64: the u64 at the address gets the offset added
  std::vector<uint32_t> inverse32;  // per-CPU PC-relative: the s32 gets it subtracted (kWithInverse32 only)
  std::vector<uint32_t> relocs32;   // R_X86_64_32/32S: the u32 gets it added
};

// The on-disk bytes, lists written in the order stored (callers sort them).
std::vector<uint8_t> encode_relocation_lists(const RelocationLists& table);

// Splits an on-disk table. Checks only the shape: a whole number of words, a leading 0 word, two or
// three 0 words in all. `name` is the file the table came from, for messages.
Result<RelocationLists> split_relocation_lists(std::span<const uint8_t> bytes, const std::string& name);

// The format a kernel of this release ("6.1.0-28-amd64", "6.15.0-rc1") expects, or nothing when
// the text does not start with MAJOR.MINOR.
std::optional<RelocationFormat> relocs_format_for_release(std::string_view release);

// "with inverse-32 list (up to 6.14)" or "without inverse-32 list (6.15+)".
const char* relocs_format_name(RelocationFormat format);

// One line for kpack info, without the newline: the format and the entries of each list.
std::string describe_relocation_lists(const RelocationLists& table);

}  // namespace kpack
