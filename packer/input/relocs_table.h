// The kernel's relocation table (formats/relocation_table.h) as the packer builds, checks, encodes
// and describes it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/relocation_table.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

// The table as the packer builds and checks it: each list's entries copied out, to sort, count and
// encode. (The stub reads a table in place: the engine's RelocationTable holds only where each list
// lies, stub/unpack/relocation_table.h.)
struct RelocationLists {
  RelocationFormat format = RelocationFormat::kWithoutInverse32;
  std::vector<uint32_t> relocs64;   // R_X86_64_64: the u64 at the address gets the offset added
  std::vector<uint32_t> inverse32;  // per-CPU PC-relative: the s32 gets it subtracted (kWithInverse32 only)
  std::vector<uint32_t> relocs32;   // R_X86_64_32/32S: the u32 gets it added
};

// The on-disk bytes, lists written in the order stored (callers sort them).
std::vector<uint8_t> encode_relocation_lists(const RelocationLists& table);

// Splits an on-disk table. Checks only the shape: a whole number of words, a leading 0 word, two or
// three 0 words in all.
Result<RelocationLists> split_relocation_lists(const FileView& table);

// The format a kernel of this release ("6.1.0-28-amd64", "6.15.0-rc1") expects, or nothing when
// the text does not start with MAJOR.MINOR.
std::optional<RelocationFormat> relocs_format_for_release(std::string_view release);

// One line for kpack info, without the newline: the format and the entries of each list.
std::string describe_relocation_lists(const RelocationLists& table);

}  // namespace kpack
