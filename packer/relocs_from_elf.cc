#include "packer/relocs_from_elf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string_view>
#include <vector>

#include "formats/elf64.h"
#include "packer/kernel_version.h"

namespace kpack {
namespace {

using elf::Ehdr;
using elf::Rela;
using elf::Shdr;
using elf::Sym;

// Absolute symbols whose values do not move with the kernel: relocations against them are skipped.
bool constant_absolute_symbol(std::string_view name) {
  static const std::regex pattern(
      "xen_irq_disable_direct_reloc|xen_save_fl_direct_reloc|xen_elfnote_.+_offset|"
      "(VDSO|__kcfi_typeid_|__crc_).*");
  return std::regex_match(name.begin(), name.end(), pattern);
}

// Symbols the linker marks absolute (defined outside any output section in the linker script)
// although they are addresses in the kernel: relocations against them are listed like any other.
bool relative_absolute_symbol(std::string_view name) {
  static const std::regex pattern(
      "__init_(begin|end)|__x86_cpu_dev_(start|end)|(__parainstructions|__alt_instructions)(_end)?|"
      "(__iommu_table|__apicdrivers|__smp_locks)(_end)?|__(start|end)_pci_.*|__(start|end)_builtin_fw|"
      "__(start|stop)___(ksymtab|kcrctab)(_gpl)?|__(start|stop)___(param|modver|bug_table)|"
      "__tracedata_(start|end)|__(start|stop)_notes|__end_rodata(_aligned|_hpage_align)?|"
      "__initramfs_start|__builtin_initramfs_start|jiffies(_64)?|__per_cpu_load|init_per_cpu__.*|"
      "__vvar_page|_end");
  return std::regex_match(name.begin(), name.end(), pattern);
}

class ElfSections {
 public:
  ElfSections(std::span<const uint8_t> file, const std::string& name) : file_(file), name_(name) {}

  // Reads the section headers; false (and error()) when they are unusable.
  Status read() {
    if (file_.size() < sizeof(Ehdr)) return fail("is too small for an ELF header");
    Ehdr ehdr;
    std::memcpy(&ehdr, file_.data(), sizeof(ehdr));
    if (std::memcmp(ehdr.ident, elf::kMagic, 4) != 0) return fail("is not an ELF file");
    if (ehdr.ident[4] != elf::kClass64 || ehdr.ident[5] != elf::kDataLittle)
      return fail("is not a little-endian 64-bit ELF file");
    if (ehdr.machine != elf::kMachineX86_64) return fail("is not an x86-64 ELF file");
    if (ehdr.shoff == 0) return Ok{};  // no sections at all
    if (ehdr.shentsize != sizeof(Shdr))
      return fail("has section headers of " + std::to_string(ehdr.shentsize) + " bytes, not 64");
    if (!fits(ehdr.shoff, sizeof(Shdr))) return fail("has its section headers outside the file");
    Shdr first = load<Shdr>(ehdr.shoff);
    uint64_t count = ehdr.shnum != 0 ? uint64_t{ehdr.shnum} : uint64_t{first.size};
    uint64_t shstrndx = ehdr.shstrndx != elf::kShnXindex ? uint64_t{ehdr.shstrndx} : uint64_t{first.link};
    if (count > file_.size() / sizeof(Shdr) || !fits(ehdr.shoff, count * sizeof(Shdr)))
      return fail("has its section headers outside the file");
    sections_.resize(count);
    for (uint64_t i = 0; i < count; ++i) sections_[i] = load<Shdr>(ehdr.shoff + i * sizeof(Shdr));
    if (count != 0 && shstrndx >= count) return fail("has a section name table index out of range");
    shstrndx_ = shstrndx;
    return Ok{};
  }

  size_t count() const { return sections_.size(); }
  const Shdr& operator[](size_t i) const { return sections_[i]; }

  // The bytes of a section's contents, checked against the file.
  Result<std::span<const uint8_t>> contents(size_t i) const {
    const Shdr& s = sections_[i];
    if (!fits(s.offset, s.size)) return fail("has section " + std::to_string(i) + " outside the file");
    return file_.subspan(s.offset, s.size);
  }

  // A NUL-terminated string at `offset` in string table section `table`.
  Result<std::string_view> string(size_t table, uint64_t offset) const {
    if (table >= sections_.size()) return fail("has a string table index out of range");
    Result<std::span<const uint8_t>> bytes = contents(table);
    if (!bytes) return bytes.error();
    if (offset >= bytes->size()) return fail("has a name outside its string table");
    const char* text = reinterpret_cast<const char*>(bytes->data() + offset);
    size_t length = strnlen(text, bytes->size() - offset);
    if (length == bytes->size() - offset) return fail("has an unterminated name in its string table");
    return std::string_view(text, length);
  }

  Result<std::string_view> section_name(size_t i) const { return string(shstrndx_, sections_[i].name); }

  Error fail(const std::string& problem) const { return error_in(name_, problem); }

 private:
  bool fits(uint64_t offset, uint64_t size) const { return offset <= file_.size() && size <= file_.size() - offset; }
  template <typename T>
  T load(uint64_t offset) const {
    T value;
    std::memcpy(&value, file_.data() + offset, sizeof(T));
    return value;
  }

  std::span<const uint8_t> file_;
  const std::string& name_;
  std::vector<Shdr> sections_;
  uint64_t shstrndx_ = 0;
};

// A symbol table with its string table and, when present, its extended section index table.
struct SymbolTable {
  std::span<const uint8_t> symbols;
  size_t strtab = 0;
  std::span<const uint8_t> xindex;
  size_t count() const { return symbols.size() / sizeof(Sym); }
  Sym at(size_t i) const {
    Sym sym;
    std::memcpy(&sym, symbols.data() + i * sizeof(Sym), sizeof(Sym));
    return sym;
  }
  // The section a symbol belongs to, through SHT_SYMTAB_SHNDX for SHN_XINDEX.
  uint32_t section_of(size_t i, const Sym& sym) const {
    if (sym.shndx != elf::kShnXindex) return sym.shndx;
    if ((i + 1) * 4 > xindex.size()) return elf::kShnUndef;
    return load_le<uint32_t>(xindex.data() + i * 4);
  }
};

Result<SymbolTable> symbol_table(const ElfSections& sections, size_t index) {
  if (index >= sections.count() || sections[index].type != elf::kShtSymtab)
    return sections.fail("has a relocation section whose symbol table index " + std::to_string(index) +
                         " is not a symbol table");
  SymbolTable table;
  Result<std::span<const uint8_t>> symbols = sections.contents(index);
  if (!symbols) return symbols.error();
  table.symbols = *symbols;
  table.strtab = sections[index].link;
  for (size_t i = 0; i < sections.count(); ++i) {
    if (sections[i].type != elf::kShtSymtabShndx || sections[i].link != index) continue;
    Result<std::span<const uint8_t>> xindex = sections.contents(i);
    if (!xindex) return xindex.error();
    table.xindex = *xindex;
  }
  return table;
}

// The value of the first named symbol `wanted` in any symbol table.
Result<std::optional<uint64_t>> find_symbol(const ElfSections& sections, std::string_view wanted) {
  for (size_t i = 0; i < sections.count(); ++i) {
    if (sections[i].type != elf::kShtSymtab) continue;
    Result<SymbolTable> table = symbol_table(sections, i);
    if (!table) return table.error();
    for (size_t s = 0; s < table->count(); ++s) {
      Sym sym = table->at(s);
      if (sym.name == 0) continue;
      Result<std::string_view> name = sections.string(table->strtab, sym.name);
      if (!name) return name.error();
      if (*name == wanted) return std::optional<uint64_t>(uint64_t{sym.value});
    }
  }
  return std::optional<uint64_t>();
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%#llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

Result<std::optional<RelocTable>> relocs_from_elf(std::span<const uint8_t> file, RelocsFormat format,
                                                  const std::string& name) {
  using Found = std::optional<RelocTable>;
  ElfSections sections(file, name);
  Status read = sections.read();
  if (!read) return read.error();

  // The relocation sections that matter: those applying to allocated sections other than notes
  // (the ELF notes hold values for loaders, read before the kernel is relocated).
  std::vector<size_t> applying;
  for (size_t i = 0; i < sections.count(); ++i) {
    const Shdr& s = sections[i];
    if (s.type != elf::kShtRela) continue;
    if (s.info >= sections.count())
      return sections.fail("has relocation section " + std::to_string(i) + " for a section out of range");
    const Shdr& target = sections[s.info];
    if (!(target.flags & elf::kShfAlloc) || target.type == elf::kShtNote) continue;
    applying.push_back(i);
  }
  // A vmlinux whose .rela sections were stripped (6.5 on) may keep a few that the strip patterns
  // miss (6.11's .relaruntime_*): without the relocations of .text the information is not there.
  bool has_text_relocations = false;
  for (size_t i : applying) {
    Result<std::string_view> target = sections.section_name(sections[i].info);
    if (!target) return target.error();
    has_text_relocations |= *target == ".text";
  }
  if (!has_text_relocations) return Found();

  // Up to 6.14, an SMP kernel links .data..percpu at address 0 (its symbols are offsets into each
  // CPU's area) and places its initial copy at __per_cpu_load.
  const bool legacy = format == RelocsFormat::kWithInverse32;
  std::optional<size_t> percpu_section;  // only when zero-based
  uint64_t percpu_load = 0;
  bool percpu_seen = false;
  std::optional<size_t> head_text;
  for (size_t i = 0; i < sections.count(); ++i) {
    Result<std::string_view> section_name = sections.section_name(i);
    if (!section_name) return section_name.error();
    if (*section_name == ".head.text" && !head_text) head_text = i;
    if (!legacy || *section_name != ".data..percpu" || percpu_seen) continue;
    percpu_seen = true;
    if (sections[i].addr != 0) continue;  // a UP kernel: per-CPU data is ordinary data
    Result<std::optional<uint64_t>> load = find_symbol(sections, "__per_cpu_load");
    if (!load) return load.error();
    if (!*load) return sections.fail("has a zero-based .data..percpu section but no __per_cpu_load symbol");
    percpu_section = i;
    percpu_load = **load;
  }

  RelocTable table;
  table.format = format;
  for (size_t index : applying) {
    const Shdr& rela = sections[index];
    Result<SymbolTable> symbols = symbol_table(sections, rela.link);
    if (!symbols) return symbols.error();
    Result<std::span<const uint8_t>> entries = sections.contents(index);
    if (!entries) return entries.error();
    const bool into_percpu = percpu_section && rela.info == *percpu_section;
    const bool into_head_text = !legacy && head_text && rela.info == *head_text;

    for (size_t e = 0; e + sizeof(Rela) <= entries->size(); e += sizeof(Rela)) {
      Rela r;
      std::memcpy(&r, entries->data() + e, sizeof(r));
      uint64_t sym_index = r.info >> 32;
      uint32_t type = static_cast<uint32_t>(r.info);
      if (sym_index >= symbols->count())
        return sections.fail("has a relocation at " + hex(r.offset) + " against symbol " + std::to_string(sym_index) +
                             ", past the end of its symbol table");
      Sym sym = symbols->at(sym_index);
      if (sym.shndx == elf::kShnUndef) continue;

      // The symbol's name, only when a rule needs it: a section symbol is named after its section.
      uint32_t sym_section = symbols->section_of(sym_index, sym);
      auto symbol_name = [&]() -> Result<std::string> {
        if (sym.name != 0) {
          Result<std::string_view> text = sections.string(symbols->strtab, sym.name);
          if (!text) return text.error();
          return std::string(*text);
        }
        if (sym_section < sections.count()) {
          Result<std::string_view> text = sections.section_name(sym_section);
          if (!text) return text.error();
          return std::string(*text);
        }
        return std::string(sym_section == elf::kShnAbs ? "ABSOLUTE" : sym_section == elf::kShnCommon ? "COMMON" : "<noname>");
      };
      auto percpu_symbol = [&]() -> Result<bool> {
        if (!legacy || !percpu_section || sym_section != *percpu_section) return false;
        Result<std::string> text = symbol_name();
        if (!text) return text.error();
        // GNU ld and gold attach these to .data..percpu although they are ordinary addresses.
        return *text != "__init_begin" && *text != "__per_cpu_load" && text->rfind("init_per_cpu_", 0) != 0;
      };

      uint64_t offset = r.offset;
      if (into_percpu) offset += percpu_load;

      switch (type) {
        case elf::kRX86_64None:
        case elf::kRX86_64RexGotpcrelx:
          break;
        case elf::kRX86_64Pc32:
        case elf::kRX86_64Plt32: {
          Result<bool> percpu = percpu_symbol();
          if (!percpu) return percpu.error();
          if (!*percpu) break;
          if (static_cast<uint32_t>(offset) == 0)
            return sections.fail("has a relocation at address 0, which the table cannot hold");
          table.inverse32.push_back(static_cast<uint32_t>(offset));
          break;
        }
        case elf::kRX86_64Pc64: {
          Result<bool> percpu = percpu_symbol();
          if (!percpu) return percpu.error();
          if (*percpu) {
            Result<std::string> text = symbol_name();
            return sections.fail("has an R_X86_64_PC64 relocation at " + hex(offset) + " against per-CPU symbol " +
                                 (text ? *text : std::string("?")));
          }
          break;
        }
        case elf::kRX86_64_64:
        case elf::kRX86_64_32:
        case elf::kRX86_64_32S: {
          Result<bool> percpu = percpu_symbol();
          if (!percpu) return percpu.error();
          if (*percpu) break;  // an offset into the per-CPU area: does not move
          if (sym.shndx == elf::kShnAbs) {
            Result<std::string> text = symbol_name();
            if (!text) return text.error();
            if (!relative_absolute_symbol(*text)) {
              if (constant_absolute_symbol(*text)) break;
              return sections.fail("has an absolute relocation at " + hex(offset) + " against absolute symbol " + *text +
                                   " (the kernel's relocs tool rejects it too)");
            }
          }
          if (into_head_text) {
            Result<std::string> text = symbol_name();
            return sections.fail("has an absolute reference to " + (text ? *text : std::string("?")) + " at " +
                                 hex(offset) + " in .head.text");
          }
          if (static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(offset))) != offset)
            return sections.fail("has a relocation at " + hex(offset) + ", outside the top and bottom 2 GiB");
          if (static_cast<uint32_t>(offset) == 0)
            return sections.fail("has a relocation at address 0, which the table cannot hold");
          (type == elf::kRX86_64_64 ? table.relocs64 : table.relocs32).push_back(static_cast<uint32_t>(offset));
          break;
        }
        default:
          return sections.fail("has relocation type " + std::to_string(type) + " at " + hex(offset) +
                               ", which the kernel's relocs tool does not handle");
      }
    }
  }
  std::sort(table.relocs64.begin(), table.relocs64.end());
  std::sort(table.inverse32.begin(), table.inverse32.end());
  std::sort(table.relocs32.begin(), table.relocs32.end());
  return Found(std::move(table));
}

std::optional<RelocsFormat> relocs_format_of_kernel(std::span<const uint8_t> elf) {
  std::optional<std::string> version = version_from_banner(elf);
  if (!version) return std::nullopt;
  return relocs_format_for_release(std::string_view(*version).substr(0, version->find(' ')));
}

}  // namespace kpack
