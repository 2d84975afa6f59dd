// The section headers of an ELF file, read without trusting it: every offset and size is checked
// against the file before use. Used for a vmlinux's relocation sections and symbols
// (relocs_from_elf.cc) and for the sections the kernel clears itself (kernel_input.cc).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/elf64.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

class ElfSections {
 public:
  explicit ElfSections(const FileView& file) : file_(file.bytes), view_(file) {}

  // Reads the section headers; an error when they are unusable.
  Status read();

  size_t count() const { return sections_.size(); }
  const elf::Shdr& operator[](size_t i) const { return sections_[i]; }

  // The bytes of a section's contents, checked against the file.
  Result<std::span<const uint8_t>> contents(size_t i) const {
    const elf::Shdr& s = sections_[i];
    if (!fits(s.offset, s.size)) return fail("has section " + std::to_string(i) + " outside the file");
    return file_.subspan(s.offset, s.size);
  }

  // A NUL-terminated string at `offset` in string table section `table`.
  Result<std::string_view> string(size_t table, uint64_t offset) const {
    if (table >= sections_.size()) return fail("has a string table index out of range");
    std::span<const uint8_t> bytes = KPACK_TRY_RESULT(contents(table));
    if (offset >= bytes.size()) return fail("has a name outside its string table");
    const char* text = reinterpret_cast<const char*>(bytes.data() + offset);
    size_t length = strnlen(text, bytes.size() - offset);
    if (length == bytes.size() - offset) return fail("has an unterminated name in its string table");
    return std::string_view(text, length);
  }

  Result<std::string_view> section_name(size_t i) const { return string(shstrndx_, sections_[i].name); }

  Error fail(const std::string& problem) const { return view_.error(problem); }

 private:
  bool fits(uint64_t offset, uint64_t size) const { return offset <= file_.size() && size <= file_.size() - offset; }

  std::span<const uint8_t> file_;
  FileView view_;
  std::vector<elf::Shdr> sections_;
  uint64_t shstrndx_ = 0;
};

// The allocated section named `name`, when `sections` has one.
std::optional<elf::Shdr> find_alloc_section(const ElfSections& sections, std::string_view name);

}  // namespace kpack
