#include "packer/input/relocs_from_elf.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "formats/elf64.h"
#include "packer/base/byte_io.h"
#include "packer/input/elf_sections.h"
#include "packer/input/kernel_version.h"

namespace kpack {
namespace {

using elf::Ehdr;
using elf::Rela;
using elf::Shdr;
using elf::Sym;

// Symbol names are input: they are matched by comparison, never by a backtracking matcher, which a
// name of 10^5 characters could send through as many stack frames (libstdc++'s std::regex).
bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
bool starts_with_one_of(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

// Absolute symbols whose values do not move with the kernel: relocations against them are skipped
// (the kernel's arch/x86/tools/relocs.c, sym_regex_kernel's S_ABS).
bool constant_absolute_symbol(std::string_view name) {
  constexpr std::string_view kElfnote = "xen_elfnote_", kOffset = "_offset";
  return is_one_of(name, {"xen_irq_disable_direct_reloc", "xen_save_fl_direct_reloc"}) ||
         starts_with_one_of(name, {"VDSO", "__kcfi_typeid_", "__crc_"}) ||
         (name.size() > kElfnote.size() + kOffset.size() && name.starts_with(kElfnote) && name.ends_with(kOffset));
}

// Symbols the linker marks absolute (defined outside any output section in the linker script)
// although they are addresses in the kernel: relocations against them are listed like any other
// (relocs.c's S_REL).
bool relative_absolute_symbol(std::string_view name) {
  return is_one_of(name, {"__init_begin",
                          "__init_end",
                          "__x86_cpu_dev_start",
                          "__x86_cpu_dev_end",
                          "__parainstructions",
                          "__parainstructions_end",
                          "__alt_instructions",
                          "__alt_instructions_end",
                          "__iommu_table",
                          "__iommu_table_end",
                          "__apicdrivers",
                          "__apicdrivers_end",
                          "__smp_locks",
                          "__smp_locks_end",
                          "__start_builtin_fw",
                          "__end_builtin_fw",
                          "__start___ksymtab",
                          "__stop___ksymtab",
                          "__start___ksymtab_gpl",
                          "__stop___ksymtab_gpl",
                          "__start___kcrctab",
                          "__stop___kcrctab",
                          "__start___kcrctab_gpl",
                          "__stop___kcrctab_gpl",
                          "__start___param",
                          "__stop___param",
                          "__start___modver",
                          "__stop___modver",
                          "__start___bug_table",
                          "__stop___bug_table",
                          "__tracedata_start",
                          "__tracedata_end",
                          "__start_notes",
                          "__stop_notes",
                          "__end_rodata",
                          "__end_rodata_aligned",
                          "__end_rodata_hpage_align",
                          "__initramfs_start",
                          "__builtin_initramfs_start",
                          "jiffies",
                          "jiffies_64",
                          "__per_cpu_load",
                          "__vvar_page",
                          "_end"}) ||
         starts_with_one_of(name, {"__start_pci_", "__end_pci_", "init_per_cpu__"});
}

// A symbol table with its string table and, when present, its extended section index table.
struct SymbolTable {
  std::span<const uint8_t> symbols;
  size_t strtab = 0;
  std::span<const uint8_t> xindex;
  size_t count() const { return symbols.size() / sizeof(Sym); }
  Sym at(size_t i) const { return get<Sym>(symbols, i * sizeof(Sym)); }
  // The section a symbol belongs to, through SHT_SYMTAB_SHNDX for SHN_XINDEX.
  uint32_t section_of(size_t i, const Sym& sym) const {
    if (sym.shndx != elf::kShnXindex) return sym.shndx;
    if ((i + 1) * 4 > xindex.size()) return elf::kShnUndef;
    return get<uint32_t>(xindex, i * 4);
  }
};

// Every symbol table of a file, with the extended index table that links to each, found in one pass
// over the sections (one pass per relocation section made a file of n sections cost n^2).
class SymbolTables {
 public:
  explicit SymbolTables(const ElfSections& sections) : sections_(sections) {
    for (size_t i = 0; i < sections.count(); ++i)
      if (sections[i].type == elf::kShtSymtabShndx) xindex_of_.emplace(sections[i].link, i);
  }

  Result<SymbolTable> at(size_t index) const {
    if (index >= sections_.count() || sections_[index].type != elf::kShtSymtab)
      return sections_.fail("has a relocation section whose symbol table index " + std::to_string(index) +
                            " is not a symbol table");
    SymbolTable table;
    table.symbols = KPACK_TRY_RESULT(sections_.contents(index));
    table.strtab = sections_[index].link;
    if (auto x = xindex_of_.find(index); x != xindex_of_.end())
      table.xindex = KPACK_TRY_RESULT(sections_.contents(x->second));
    return table;
  }

 private:
  const ElfSections& sections_;
  std::map<size_t, size_t> xindex_of_;  // symbol table -> its SHT_SYMTAB_SHNDX (the first one)
};

// The value of the first symbol named `wanted` in any symbol table.
Result<std::optional<uint64_t>> find_symbol(const ElfSections& sections, std::string_view wanted) {
  SymbolTables tables(sections);
  for (size_t i = 0; i < sections.count(); ++i) {
    if (sections[i].type != elf::kShtSymtab) continue;
    SymbolTable table = KPACK_TRY_RESULT(tables.at(i));
    for (size_t s = 0; s < table.count(); ++s) {
      Sym sym = table.at(s);
      if (sym.name == 0) continue;
      if (KPACK_TRY_RESULT(sections.string(table.strtab, sym.name)) == wanted)
        return std::optional<uint64_t>(uint64_t{sym.value});
    }
  }
  return std::optional<uint64_t>();
}

// The relocation sections that matter: those applying to allocated sections other than notes
// (the ELF notes hold values for loaders, read before the kernel is relocated).
Result<std::vector<size_t>> applying_relocation_sections(const ElfSections& sections) {
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
  return applying;
}

// Whether any of them applies to .text: a vmlinux whose .rela sections were stripped (6.5 on) may
// keep a few that the strip patterns miss (6.11's .relaruntime_*), too few for a table.
Result<bool> relocates_text(const ElfSections& sections, const std::vector<size_t>& applying) {
  bool found = false;
  for (size_t i : applying) found |= KPACK_TRY_RESULT(sections.section_name(sections[i].info)) == ".text";
  return found;
}

// The sections some rules single out.
struct SpecialSections {
  std::optional<size_t> head_text;
  // Up to 6.14, an SMP kernel links .data..percpu at address 0 (its symbols are offsets into each
  // CPU's area) and places its initial copy at __per_cpu_load; a UP kernel's is ordinary data.
  std::optional<size_t> zero_based_percpu;
  uint64_t percpu_load = 0;
};

Result<SpecialSections> special_sections(const ElfSections& sections, RelocationFormat format) {
  SpecialSections special;
  bool percpu_seen = false;
  for (size_t i = 0; i < sections.count(); ++i) {
    std::string_view name = KPACK_TRY_RESULT(sections.section_name(i));
    if (name == ".head.text" && !special.head_text) special.head_text = i;
    if (format != RelocationFormat::kWithInverse32 || name != ".data..percpu" || percpu_seen) continue;
    percpu_seen = true;
    if (sections[i].addr != 0) continue;
    std::optional<uint64_t> load = KPACK_TRY_RESULT(find_symbol(sections, "__per_cpu_load"));
    if (!load) return sections.fail("has a zero-based .data..percpu section but no __per_cpu_load symbol");
    special.zero_based_percpu = i;
    special.percpu_load = *load;
  }
  return special;
}

// One relocation against a defined symbol.
struct Relocation {
  uint64_t offset;  // the address to patch (inside the zero-based per-CPU section: moved by __per_cpu_load)
  uint32_t type;
  Sym symbol;
  uint32_t symbol_section;  // through SHT_SYMTAB_SHNDX
  const SymbolTable* symbols;
};

// The lists, filled one relocation section at a time by the rules of relocs_from_elf.h.
class ListSorter {
 public:
  ListSorter(const ElfSections& sections, RelocationFormat format, const SpecialSections& special)
      : sections_(sections), tables_(sections), special_(special) {
    lists_.format = format;
  }

  // Every entry of relocation section `index` into its list, or the error the kernel's tool reports.
  Status add_section(size_t index) {
    const Shdr& rela = sections_[index];
    SymbolTable symbols = KPACK_TRY_RESULT(tables_.at(rela.link));
    std::span<const uint8_t> entries = KPACK_TRY_RESULT(sections_.contents(index));
    const bool into_percpu = special_.zero_based_percpu && rela.info == *special_.zero_based_percpu;
    const bool into_head_text = !legacy() && special_.head_text && rela.info == *special_.head_text;
    for (size_t e = 0; e + sizeof(Rela) <= entries.size(); e += sizeof(Rela)) {
      Rela r = get<Rela>(entries, e);
      uint64_t sym_index = r.info >> 32;
      if (sym_index >= symbols.count())
        return sections_.fail("has a relocation at " + hex(r.offset) + " against symbol " + std::to_string(sym_index) +
                              ", past the end of its symbol table");
      Sym sym = symbols.at(sym_index);
      if (sym.shndx == elf::kShnUndef) continue;
      uint64_t offset = r.offset + (into_percpu ? special_.percpu_load : 0);
      KPACK_TRY_RESULT(add({offset, static_cast<uint32_t>(r.info), sym, symbols.section_of(sym_index, sym), &symbols},
                           into_head_text));
    }
    return Ok{};
  }

  // The lists, each sorted ascending as the kernel's tool writes them.
  RelocationLists sorted() && {
    std::sort(lists_.relocs64.begin(), lists_.relocs64.end());
    std::sort(lists_.inverse32.begin(), lists_.inverse32.end());
    std::sort(lists_.relocs32.begin(), lists_.relocs32.end());
    return std::move(lists_);
  }

 private:
  bool legacy() const { return lists_.format == RelocationFormat::kWithInverse32; }

  Status add(const Relocation& r, bool into_head_text) {
    switch (r.type) {
      case elf::kRX86_64None:
      case elf::kRX86_64RexGotpcrelx: return Ok{};
      case elf::kRX86_64Pc32:
      case elf::kRX86_64Plt32: return add_pc_relative(r);
      case elf::kRX86_64Pc64:
        // Nowhere to list a 64-bit PC-relative reference to a per-CPU symbol.
        if (!KPACK_TRY_RESULT(against_percpu_symbol(r))) return Ok{};
        return sections_.fail("has an R_X86_64_PC64 relocation at " + hex(r.offset) + " against per-CPU symbol " +
                              name_for_message(r));
      case elf::kRX86_64_64:
      case elf::kRX86_64_32:
      case elf::kRX86_64_32S: return add_absolute(r, into_head_text);
      default:
        return sections_.fail("has relocation type " + std::to_string(r.type) + " at " + hex(r.offset) +
                              ", which the kernel's relocs tool does not handle");
    }
  }

  // Code that moves keeps its PC-relative references, except to per-CPU data, which does not move.
  Status add_pc_relative(const Relocation& r) {
    if (!KPACK_TRY_RESULT(against_percpu_symbol(r))) return Ok{};
    KPACK_TRY_RESULT(check_listable(r.offset));
    lists_.inverse32.push_back(relocation_entry(r.offset));
    return Ok{};
  }

  Status add_absolute(const Relocation& r, bool into_head_text) {
    if (KPACK_TRY_RESULT(against_percpu_symbol(r))) return Ok{};  // an offset into the per-CPU area: does not move
    if (r.symbol.shndx == elf::kShnAbs) {
      std::string name = KPACK_TRY_RESULT(symbol_name(r));
      if (!relative_absolute_symbol(name)) {
        if (constant_absolute_symbol(name)) return Ok{};
        return sections_.fail("has an absolute relocation at " + hex(r.offset) + " against absolute symbol " + name +
                              " (the kernel's relocs tool rejects it too)");
      }
    }
    if (into_head_text)
      return sections_.fail("has an absolute reference to " + name_for_message(r) + " at " + hex(r.offset) +
                            " in .head.text");
    if (relocation_virtual_address(relocation_entry(r.offset)) != r.offset)
      return sections_.fail("has a relocation at " + hex(r.offset) + ", outside the top and bottom 2 GiB");
    KPACK_TRY_RESULT(check_listable(r.offset));
    (r.type == elf::kRX86_64_64 ? lists_.relocs64 : lists_.relocs32).push_back(relocation_entry(r.offset));
    return Ok{};
  }

  // 0 ends a list on disk, so no entry may be 0.
  Status check_listable(uint64_t offset) const {
    if (relocation_entry(offset) == kRelocationListStart)
      return sections_.fail("has a relocation at address 0, which the table cannot hold");
    return Ok{};
  }

  // The symbol's name, only when a rule needs it: a section symbol is named after its section.
  Result<std::string> symbol_name(const Relocation& r) const {
    if (r.symbol.name != 0) return std::string(KPACK_TRY_RESULT(sections_.string(r.symbols->strtab, r.symbol.name)));
    if (r.symbol_section < sections_.count())
      return std::string(KPACK_TRY_RESULT(sections_.section_name(r.symbol_section)));
    return std::string(r.symbol_section == elf::kShnAbs      ? "ABSOLUTE"
                       : r.symbol_section == elf::kShnCommon ? "COMMON"
                                                             : "<noname>");
  }
  std::string name_for_message(const Relocation& r) const {
    Result<std::string> name = symbol_name(r);
    return name ? *name : std::string("?");
  }

  // Whether the symbol is an offset into the zero-based per-CPU area rather than an address.
  Result<bool> against_percpu_symbol(const Relocation& r) const {
    if (!legacy() || !special_.zero_based_percpu || r.symbol_section != *special_.zero_based_percpu) return false;
    std::string name = KPACK_TRY_RESULT(symbol_name(r));
    // GNU ld and gold attach these to .data..percpu although they are ordinary addresses.
    return name != "__init_begin" && name != "__per_cpu_load" && name.rfind("init_per_cpu_", 0) != 0;
  }

  const ElfSections& sections_;
  SymbolTables tables_;
  SpecialSections special_;
  RelocationLists lists_;
};

}  // namespace

Result<std::optional<RelocationLists>> relocs_from_elf(const FileView& file, RelocationFormat format) {
  ElfSections sections(file);
  KPACK_TRY_RESULT(sections.read());
  std::vector<size_t> applying = KPACK_TRY_RESULT(applying_relocation_sections(sections));
  // Without the relocations of .text, the information is not in the file.
  if (!KPACK_TRY_RESULT(relocates_text(sections, applying))) return std::optional<RelocationLists>();
  ListSorter sorter(sections, format, KPACK_TRY_RESULT(special_sections(sections, format)));
  for (size_t index : applying) KPACK_TRY_RESULT(sorter.add_section(index));
  return std::optional<RelocationLists>(std::move(sorter).sorted());
}

std::optional<RelocationFormat> relocs_format_of_kernel(std::span<const uint8_t> elf) {
  std::optional<std::string> version = version_from_banner(elf);
  if (!version) return std::nullopt;
  return relocs_format_for_release(std::string_view(*version).substr(0, version->find(' ')));
}

std::optional<bool> elf_defines_symbol(std::span<const uint8_t> elf, std::string_view symbol) {
  // Only a question: a section table the relocation reader would refuse has no symbols to ask.
  ElfSections sections({elf, ""});
  if (!sections.read()) return std::nullopt;
  bool has_table = false;
  for (size_t i = 0; i < sections.count(); ++i) has_table |= sections[i].type == elf::kShtSymtab;
  Result<std::optional<uint64_t>> found = find_symbol(sections, symbol);
  if (!has_table || !found) return std::nullopt;
  return found->has_value();
}

}  // namespace kpack
