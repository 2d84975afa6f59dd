#include "packer/input/elf_sections.h"

#include <cstring>

#include "packer/base/byte_io.h"

namespace kpack {

Status ElfSections::read() {
  if (file_.size() < sizeof(elf::Ehdr)) return fail("is too small for an ELF header");
  elf::Ehdr ehdr = get<elf::Ehdr>(file_, 0);
  if (std::memcmp(ehdr.ident, elf::kMagic, 4) != 0) return fail("is not an ELF file");
  if (ehdr.ident[4] != elf::kClass64 || ehdr.ident[5] != elf::kDataLittle)
    return fail("is not a little-endian 64-bit ELF file");
  if (ehdr.machine != elf::kMachineX86_64) return fail("is not an x86-64 ELF file");
  if (ehdr.shoff == 0) return Ok{};  // no sections at all
  if (ehdr.shentsize != sizeof(elf::Shdr))
    return fail("has section headers of " + std::to_string(ehdr.shentsize) + " bytes, not 64");
  if (!fits(ehdr.shoff, sizeof(elf::Shdr))) return fail("has its section headers outside the file");
  elf::Shdr first = get<elf::Shdr>(file_, ehdr.shoff);
  uint64_t count = ehdr.shnum != 0 ? uint64_t{ehdr.shnum} : uint64_t{first.size};
  uint64_t shstrndx = ehdr.shstrndx != elf::kShnXindex ? uint64_t{ehdr.shstrndx} : uint64_t{first.link};
  if (count > file_.size() / sizeof(elf::Shdr) || !fits(ehdr.shoff, count * sizeof(elf::Shdr)))
    return fail("has its section headers outside the file");
  sections_.resize(count);
  for (uint64_t i = 0; i < count; ++i) sections_[i] = get<elf::Shdr>(file_, ehdr.shoff + i * sizeof(elf::Shdr));
  if (count != 0 && shstrndx >= count) return fail("has a section name table index out of range");
  shstrndx_ = shstrndx;
  return Ok{};
}

std::optional<elf::Shdr> find_alloc_section(const ElfSections& sections, std::string_view name) {
  for (size_t i = 0; i < sections.count(); ++i) {
    if (!(sections[i].flags & elf::kShfAlloc)) continue;
    Result<std::string_view> found = sections.section_name(i);
    if (found && *found == name) return sections[i];
  }
  return std::nullopt;
}

}  // namespace kpack
