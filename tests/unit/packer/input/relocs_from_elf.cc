// The relocation table computed from .rela sections (packer/input/relocs_from_elf.h), its on-disk form
// (packer/input/relocs_table.h) and where packing takes it from (load_kernel): synthetic ELF files, one
// per rule, with the exact table bytes asserted.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/bytes.h"
#include "formats/elf64.h"
#include "packer/input/kernel_input.h"
#include "packer/input/relocs_from_elf.h"
#include "packer/input/relocs_table.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/temp_dir.h"

using namespace kpack;

namespace {

constexpr uint64_t kText = 0xFFFFFFFF81000000;  // where the synthetic .text is linked
constexpr uint32_t kAllocWrite = 3;             // SHF_WRITE | SHF_ALLOC
constexpr uint32_t kAllocExec = 6;              // SHF_ALLOC | SHF_EXECINSTR
constexpr uint32_t kProgbits = 1;

// The table's words, as the kernel's relocs tool writes them.
std::vector<uint8_t> words(std::initializer_list<uint32_t> values) {
  std::vector<uint8_t> out;
  for (uint32_t v : values) test::append_le32(out, v);
  return out;
}

// An ELF file with sections, symbols and relocations, appended to `base` (by default just an ELF
// header; a synthetic kernel when load_kernel must accept it). Section 0 is the null section; the
// symbol table, its string tables and one .rela section per section that has relocations are
// added by build().
class ElfBuilder {
 public:
  explicit ElfBuilder(std::vector<uint8_t> base = {}) : base_(std::move(base)) {}

  uint32_t section(const std::string& name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t size = 0x100) {
    sections_.push_back({name, type, flags, addr, std::vector<uint8_t>(size, 0)});
    return static_cast<uint32_t>(sections_.size());  // index in the file: the null section comes first
  }
  uint32_t symbol(const std::string& name, uint16_t shndx, uint64_t value = 0) {
    symbols_.push_back({name, shndx, value});
    return static_cast<uint32_t>(symbols_.size());  // index 0 is the null symbol
  }
  void rela(uint32_t target, uint64_t offset, uint32_t type, uint32_t symbol) {
    relas_.push_back({target, offset, type, symbol});
  }
  // An SHT_SYMTAB_SHNDX entry for a symbol whose shndx is SHN_XINDEX.
  void extended_index(uint32_t symbol, uint32_t section) { xindex_.push_back({symbol, section}); }
  // Bytes anywhere in the file (a version banner).
  void text(const std::string& bytes) { extra_ = bytes; }

  std::vector<uint8_t> build() const {
    struct Out {
      std::string name;
      elf::Shdr header;
      std::vector<uint8_t> data;
    };
    std::vector<Out> out;
    out.push_back({"", {}, {}});
    for (const Section& s : sections_) {
      elf::Shdr h{};
      h.type = s.type;
      h.flags = s.flags;
      h.addr = s.addr;
      h.size = s.data.size();
      out.push_back({s.name, h, s.data});
    }
    const uint32_t symtab = static_cast<uint32_t>(out.size());
    const uint32_t strtab = symtab + 1;
    std::vector<uint8_t> strings(1, 0), symbols(sizeof(elf::Sym), 0);
    for (const Symbol& s : symbols_) {
      elf::Sym sym{};
      if (!s.name.empty()) {
        sym.name = static_cast<uint32_t>(strings.size());
        strings.insert(strings.end(), s.name.begin(), s.name.end());
        strings.push_back(0);
      }
      sym.shndx = s.shndx;
      sym.value = s.value;
      test::put(symbols, symbols.size(), sym);
    }
    elf::Shdr sh{};
    sh.type = elf::kShtSymtab;
    sh.link = strtab;
    sh.entsize = sizeof(elf::Sym);
    sh.size = symbols.size();
    out.push_back({".symtab", sh, symbols});
    sh = {};
    sh.type = elf::kShtStrtab;
    sh.size = strings.size();
    out.push_back({".strtab", sh, strings});
    if (!xindex_.empty()) {
      std::vector<uint8_t> table(4 * (symbols_.size() + 1), 0);
      for (auto [symbol, section] : xindex_) store_le<uint32_t>(table.data() + 4 * symbol, section);
      sh = {};
      sh.type = elf::kShtSymtabShndx;
      sh.link = symtab;
      sh.size = table.size();
      out.push_back({".symtab_shndx", sh, table});
    }
    for (uint32_t target = 1; target <= sections_.size(); ++target) {
      std::vector<uint8_t> entries;
      for (const Rela& r : relas_) {
        if (r.target != target) continue;
        elf::Rela e{};
        e.offset = r.offset;
        e.info = uint64_t{r.symbol} << 32 | r.type;
        test::put(entries, entries.size(), e);
      }
      if (entries.empty()) continue;
      sh = {};
      sh.type = elf::kShtRela;
      sh.link = symtab;
      sh.info = target;
      sh.entsize = sizeof(elf::Rela);
      sh.size = entries.size();
      out.push_back({".rela" + sections_[target - 1].name, sh, entries});
    }
    // The section name table last.
    std::vector<uint8_t> names(1, 0);
    out.push_back({".shstrtab", {}, {}});
    for (Out& o : out) {
      if (o.name.empty()) continue;
      o.header.name = static_cast<uint32_t>(names.size());
      names.insert(names.end(), o.name.begin(), o.name.end());
      names.push_back(0);
    }
    out.back().header.type = elf::kShtStrtab;
    out.back().header.size = names.size();
    out.back().data = names;

    std::vector<uint8_t> file = base_;
    if (file.size() < sizeof(elf::Ehdr)) file.assign(sizeof(elf::Ehdr), 0);
    file.insert(file.end(), extra_.begin(), extra_.end());
    for (Out& o : out) {
      if (o.data.empty()) continue;
      o.header.offset = file.size();
      file.insert(file.end(), o.data.begin(), o.data.end());
    }
    auto ehdr = test::get<elf::Ehdr>(file, 0);
    if (base_.empty()) {
      const uint8_t ident[16] = {0x7F, 'E', 'L', 'F', 2, 1, 1};
      std::memcpy(ehdr.ident, ident, 16);
      ehdr.type = elf::kTypeExec;
      ehdr.machine = elf::kMachineX86_64;
      ehdr.version = 1;
      ehdr.ehsize = sizeof(elf::Ehdr);
    }
    ehdr.shoff = (file.size() + 7) & ~7ull;
    ehdr.shentsize = sizeof(elf::Shdr);
    ehdr.shnum = static_cast<uint16_t>(out.size());
    ehdr.shstrndx = static_cast<uint16_t>(out.size() - 1);
    file.resize(ehdr.shoff);
    test::put(file, 0, ehdr);
    for (const Out& o : out) test::put(file, file.size(), o.header);
    return file;
  }

 private:
  struct Section {
    std::string name;
    uint32_t type;
    uint64_t flags, addr;
    std::vector<uint8_t> data;
  };
  struct Symbol {
    std::string name;
    uint16_t shndx;
    uint64_t value;
  };
  struct Rela {
    uint32_t target;
    uint64_t offset;
    uint32_t type;
    uint32_t symbol;
  };
  std::vector<uint8_t> base_;
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;
  std::vector<Rela> relas_;
  std::vector<std::pair<uint32_t, uint32_t>> xindex_;
  std::string extra_;
};

// The table relocs_from_elf computes, encoded; fails the test when there is none or an error.
std::vector<uint8_t> table_of(const std::vector<uint8_t>& file, RelocationFormat format) {
  Result<std::optional<RelocationLists>> table = relocs_from_elf({file, "vmlinux"}, format);
  if (!table) FAIL(table.error().message);
  REQUIRE(table->has_value());
  return encode_relocation_lists(**table);
}

std::string error_of(const std::vector<uint8_t>& file, RelocationFormat format) {
  Result<std::optional<RelocationLists>> table = relocs_from_elf({file, "vmlinux"}, format);
  REQUIRE_FALSE(table.ok());
  return table.error().message;
}

constexpr auto kLegacy = RelocationFormat::kWithInverse32;
constexpr auto kModern = RelocationFormat::kWithoutInverse32;

}  // namespace

TEST_CASE("relocation types: 64 to the 64-bit list, 32 and 32S to the 32-bit list, PC-relative ones need nothing") {
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t data = b.section(".data", kProgbits, kAllocWrite, kText + 0x1000, 0x1000);
  uint32_t func = b.symbol("func", static_cast<uint16_t>(text), kText + 0x40);
  uint32_t var = b.symbol("var", static_cast<uint16_t>(data), kText + 0x1010);
  uint32_t undefined = b.symbol("undefined_weak", elf::kShnUndef);
  // Out of order on purpose: each list comes out sorted.
  b.rela(data, kText + 0x1020, elf::kRX86_64_64, func);
  b.rela(text, kText + 0x0300, elf::kRX86_64_32S, var);
  b.rela(data, kText + 0x1008, elf::kRX86_64_64, var);
  b.rela(text, kText + 0x0100, elf::kRX86_64_32, func);
  b.rela(text, kText + 0x0200, elf::kRX86_64_32S, var);
  b.rela(text, kText + 0x0010, elf::kRX86_64Pc32, func);
  b.rela(text, kText + 0x0020, elf::kRX86_64Plt32, func);
  b.rela(text, kText + 0x0030, elf::kRX86_64Pc64, var);
  b.rela(text, kText + 0x0040, elf::kRX86_64RexGotpcrelx, var);
  b.rela(text, kText + 0x0050, elf::kRX86_64None, 0);
  b.rela(text, kText + 0x0060, elf::kRX86_64_64, undefined);  // undefined: skipped
  std::vector<uint8_t> file = b.build();

  CHECK(table_of(file, kModern) == words({0, 0x81001008, 0x81001020, 0, 0x81000100, 0x81000200, 0x81000300}));
  // Up to 6.14 the same relocations, with an (empty) inverse-32 list between.
  CHECK(table_of(file, kLegacy) == words({0, 0x81001008, 0x81001020, 0, 0, 0x81000100, 0x81000200, 0x81000300}));
}

TEST_CASE("relocations in non-allocated sections and in notes are not listed") {
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t notes = b.section(".notes", elf::kShtNote, 2, kText + 0x1000);
  uint32_t debug = b.section(".debug_info", kProgbits, 0, 0);
  uint32_t func = b.symbol("startup_xen", static_cast<uint16_t>(text), kText);
  b.rela(notes, kText + 0x1008, elf::kRX86_64_64, func);
  b.rela(debug, 0x10, elf::kRX86_64_64, func);
  b.rela(text, kText + 0x10, elf::kRX86_64_32S, func);
  CHECK(table_of(b.build(), kModern) == words({0, 0, 0x81000010}));
}

TEST_CASE("no relocation sections for allocated sections: no table") {
  ElfBuilder none;
  none.section(".text", kProgbits, kAllocExec, kText);
  Result<std::optional<RelocationLists>> table = relocs_from_elf({none.build(), "vmlinux"}, kModern);
  REQUIRE(table.ok());
  CHECK_FALSE(table->has_value());

  ElfBuilder debug_only;
  debug_only.section(".text", kProgbits, kAllocExec, kText);
  uint32_t debug = debug_only.section(".debug_info", kProgbits, 0, 0);
  debug_only.rela(debug, 0x10, elf::kRX86_64_64, debug_only.symbol("x", 1, kText));
  table = relocs_from_elf({debug_only.build(), "vmlinux"}, kLegacy);
  REQUIRE(table.ok());
  CHECK_FALSE(table->has_value());

  // Stripped of its .rela sections but for one the strip patterns miss (6.12's
  // .relaruntime_ptr_USER_PTR_MAX): relocations for data only are not the kernel's table.
  ElfBuilder stripped;
  stripped.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t runtime = stripped.section("runtime_ptr_USER_PTR_MAX", kProgbits, 2, kText + 0x2000);
  stripped.rela(runtime, kText + 0x2000, elf::kRX86_64Pc32, stripped.symbol("f", 1, kText));
  table = relocs_from_elf({stripped.build(), "vmlinux"}, kLegacy);
  REQUIRE(table.ok());
  CHECK_FALSE(table->has_value());

  // No section headers at all (a stripped or rewritten ELF).
  table = relocs_from_elf({test::make_kernel_elf(test::typical_segments()), "vmlinux"}, kLegacy);
  REQUIRE(table.ok());
  CHECK_FALSE(table->has_value());
}

TEST_CASE("absolute symbols: listed when known relative (S_REL), skipped when constant (S_ABS), else an error") {
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  // Listed: the linker marks these absolute but they are kernel addresses.
  const char* relative[] = {"_end",
                            "__init_begin",
                            "__start___ksymtab_gpl",
                            "__stop___param",
                            "jiffies",
                            "jiffies_64",
                            "__end_rodata_hpage_align",
                            "__start_pci_fixups_early",
                            "__initramfs_start",
                            "__builtin_initramfs_start",
                            "init_per_cpu__gdt_page",
                            "__alt_instructions_end",
                            "__end_builtin_fw"};
  uint64_t at = kText + 0x100;
  for (const char* name : relative) {
    b.rela(text, at, elf::kRX86_64_64, b.symbol(name, elf::kShnAbs, 0x1234));
    at += 8;
  }
  // Skipped: constants.
  const char* constant[] = {"__crc_printk", "VDSO32_vsyscall", "__kcfi_typeid_foo", "xen_elfnote_phys32_entry_offset",
                            "xen_irq_disable_direct_reloc"};
  for (const char* name : constant) b.rela(text, kText + 0x800, elf::kRX86_64_32S, b.symbol(name, elf::kShnAbs, 5));
  std::vector<uint8_t> expected = words({0});
  for (uint64_t a = kText + 0x100; a < at; a += 8) test::append_le32(expected, static_cast<uint32_t>(a));
  test::append_le32(expected, 0);
  CHECK(table_of(b.build(), kModern) == expected);

  // Any other absolute symbol, or a name that only contains an S_REL one, stops the computation.
  for (const char* name : {"some_constant", "x_end", "_end_x", "jiffies_32", "__crc"}) {
    ElfBuilder bad;
    uint32_t t = bad.section(".text", kProgbits, kAllocExec, kText);
    bad.rela(t, kText + 0x10, elf::kRX86_64_64, bad.symbol(name, elf::kShnAbs, 1));
    CHECK(error_of(bad.build(), kModern) ==
          "vmlinux: has an absolute relocation at 0xffffffff81000010 against absolute symbol " + std::string(name) +
              " (the kernel's relocs tool rejects it too)");
  }
}

TEST_CASE("absolute symbol names are compared, not matched by a backtracking matcher: a 200,000-character name") {
  // std::regex_match recursed once per character on such a name and overflowed the stack.
  for (const std::string& name : {std::string(200000, 'j'), "__crc_" + std::string(200000, 'x'),
                                  "xen_elfnote_" + std::string(200000, 'x') + "_offset"}) {
    ElfBuilder b;
    uint32_t t = b.section(".text", kProgbits, kAllocExec, kText);
    b.rela(t, kText + 0x10, elf::kRX86_64_64, b.symbol(name, elf::kShnAbs, 1));
    Result<std::optional<RelocationLists>> table = relocs_from_elf({b.build(), "vmlinux"}, kModern);
    if (name[0] == 'j') {
      REQUIRE_FALSE(table.ok());
      CHECK(table.error().message.find("against absolute symbol jjjj") != std::string::npos);
    } else {
      REQUIRE(table.ok());  // constants: skipped
      REQUIRE(table->has_value());
      CHECK((*table)->relocs64.empty());
    }
  }
}

TEST_CASE("every relocation section finds its symbol table in one pass over the sections: 20,000 of them") {
  ElfBuilder b;
  uint32_t symbol = 0;
  std::vector<uint32_t> texts;
  for (int i = 0; i < 20000; ++i) texts.push_back(b.section(".text", kProgbits, kAllocExec, kText + i * 0x100ull));
  symbol = b.symbol("", static_cast<uint16_t>(texts[0]));
  for (size_t i = 0; i < texts.size(); ++i) b.rela(texts[i], kText + i * 0x100 + 8, elf::kRX86_64_64, symbol);
  std::vector<uint8_t> file = b.build();
  Result<std::optional<RelocationLists>> table = relocs_from_elf({file, "vmlinux"}, kModern);
  REQUIRE(table.ok());
  REQUIRE(table->has_value());
  CHECK((*table)->relocs64.size() == 20000);
}

TEST_CASE("up to 6.14, an SMP kernel's zero-based per-CPU section: inverse-32 list, skipped and moved addresses") {
  constexpr uint64_t kPerCpuLoad = kText + 0x2000;  // where .data..percpu's initial copy sits
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t percpu = b.section(".data..percpu", kProgbits, kAllocWrite, 0, 0x1000);
  uint32_t func = b.symbol("func", static_cast<uint16_t>(text), kText + 0x40);
  uint32_t counter = b.symbol("cpu_counter", static_cast<uint16_t>(percpu), 0x80);
  uint32_t section_sym = b.symbol("", static_cast<uint16_t>(percpu), 0);  // named after its section
  uint32_t extended = b.symbol("far_counter", elf::kShnXindex, 0x90);     // in .data..percpu via SHN_XINDEX
  b.extended_index(extended, percpu);
  // Linkers put these in .data..percpu although they are ordinary addresses.
  uint32_t load = b.symbol("__per_cpu_load", static_cast<uint16_t>(percpu), kPerCpuLoad);
  uint32_t init_begin = b.symbol("__init_begin", static_cast<uint16_t>(percpu), kPerCpuLoad);
  uint32_t init_gdt = b.symbol("init_per_cpu__gdt_page", static_cast<uint16_t>(percpu), kPerCpuLoad + 0x100);

  b.rela(text, kText + 0x500, elf::kRX86_64Pc32, counter);       // %gs-relative access: inverse list
  b.rela(text, kText + 0x400, elf::kRX86_64Plt32, section_sym);  // inverse list
  b.rela(text, kText + 0x600, elf::kRX86_64Pc32, extended);      // inverse list
  b.rela(text, kText + 0x700, elf::kRX86_64Pc32, load);          // not per-CPU: nothing
  b.rela(text, kText + 0x100, elf::kRX86_64_64, counter);        // an offset into the area: skipped
  b.rela(text, kText + 0x108, elf::kRX86_64_32S, counter);       // skipped
  b.rela(text, kText + 0x110, elf::kRX86_64_64, init_begin);     // listed
  b.rela(text, kText + 0x118, elf::kRX86_64_64, init_gdt);       // listed
  b.rela(percpu, 0x10, elf::kRX86_64_64, func);                  // inside .data..percpu: moved to its copy
  b.rela(percpu, 0x20, elf::kRX86_64_32S, func);
  b.text("padding so that no offset is 0");
  std::vector<uint8_t> file = b.build();

  CHECK(table_of(file, kLegacy) == words({0, 0x81000110, 0x81000118, 0x81002010,  // 64-bit
                                          0, 0x81000400, 0x81000500, 0x81000600,  // inverse-32
                                          0, 0x81002020}));                       // 32-bit

  // From 6.15 the per-CPU section is not special: its symbols are addresses like any other, and
  // a relocation inside it at 0x10 is the kernel's tool's business (it would list 0x10 as is).
  Result<std::optional<RelocationLists>> modern = relocs_from_elf({file, "vmlinux"}, kModern);
  REQUIRE(modern.ok());
  REQUIRE(modern->has_value());
  CHECK((*modern)->relocs64 == std::vector<uint32_t>{0x10, 0x81000100, 0x81000110, 0x81000118});
  CHECK((*modern)->relocs32 == std::vector<uint32_t>{0x20, 0x81000108});
  CHECK((*modern)->inverse32.empty());

  // A UP kernel links .data..percpu like ordinary data (not at 0): nothing special either.
  ElfBuilder up;
  uint32_t up_text = up.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t up_percpu = up.section(".data..percpu", kProgbits, kAllocWrite, kText + 0x3000);
  uint32_t up_counter = up.symbol("cpu_counter", static_cast<uint16_t>(up_percpu), kText + 0x3080);
  up.rela(up_text, kText + 0x500, elf::kRX86_64Pc32, up_counter);
  up.rela(up_text, kText + 0x100, elf::kRX86_64_64, up_counter);
  up.rela(up_percpu, kText + 0x3010, elf::kRX86_64_64, up_counter);
  CHECK(table_of(up.build(), kLegacy) == words({0, 0x81000100, 0x81003010, 0, 0}));
}

TEST_CASE("per-CPU errors up to 6.14: PC64 against a per-CPU symbol, no __per_cpu_load") {
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t percpu = b.section(".data..percpu", kProgbits, kAllocWrite, 0);
  b.symbol("__per_cpu_load", static_cast<uint16_t>(percpu), kText + 0x2000);
  b.rela(text, kText + 0x30, elf::kRX86_64Pc64, b.symbol("cpu_counter", static_cast<uint16_t>(percpu), 0x80));
  CHECK(error_of(b.build(), kLegacy) ==
        "vmlinux: has an R_X86_64_PC64 relocation at 0xffffffff81000030 against per-CPU symbol cpu_counter");

  ElfBuilder no_load;
  uint32_t t = no_load.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t p = no_load.section(".data..percpu", kProgbits, kAllocWrite, 0);
  no_load.rela(t, kText + 0x30, elf::kRX86_64Pc32, no_load.symbol("cpu_counter", static_cast<uint16_t>(p), 0x80));
  CHECK(error_of(no_load.build(), kLegacy) ==
        "vmlinux: has a zero-based .data..percpu section but no __per_cpu_load symbol");
}

TEST_CASE("from 6.15, an absolute reference in .head.text is an error") {
  ElfBuilder b;
  uint32_t head = b.section(".head.text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText + 0x1000, 0x1000);
  uint32_t early_data = b.symbol("early_data", static_cast<uint16_t>(head), kText + 0x800);
  b.rela(text, kText + 0x1010, elf::kRX86_64_32S, early_data);
  b.rela(head, kText + 0x20, elf::kRX86_64_32S, early_data);
  std::vector<uint8_t> file = b.build();
  CHECK(error_of(file, kModern) ==
        "vmlinux: has an absolute reference to early_data at 0xffffffff81000020 in .head.text");
  CHECK(table_of(file, kLegacy) == words({0, 0, 0, 0x81000020, 0x81001010}));
}

TEST_CASE("what the table cannot hold and relocation types the kernel's tool rejects are errors") {
  ElfBuilder far;
  uint32_t text = far.section(".text", kProgbits, kAllocExec, 0x100000000ull, 0x1000);
  far.rela(text, 0x100000010ull, elf::kRX86_64_64, far.symbol("f", static_cast<uint16_t>(text), 0x100000000ull));
  CHECK(error_of(far.build(), kModern) == "vmlinux: has a relocation at 0x100000010, outside the top and bottom 2 GiB");

  ElfBuilder zero;
  text = zero.section(".text", kProgbits, kAllocExec, 0, 0x1000);
  zero.rela(text, 0, elf::kRX86_64_64, zero.symbol("f", static_cast<uint16_t>(text), 0));
  CHECK(error_of(zero.build(), kModern) == "vmlinux: has a relocation at address 0, which the table cannot hold");

  ElfBuilder gotpcrel;
  text = gotpcrel.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  gotpcrel.rela(text, kText + 8, 9 /* R_X86_64_GOTPCREL */, gotpcrel.symbol("f", static_cast<uint16_t>(text), kText));
  CHECK(error_of(gotpcrel.build(), kLegacy) ==
        "vmlinux: has relocation type 9 at 0xffffffff81000008, which the kernel's relocs tool does not handle");
}

TEST_CASE("malformed section data is an error naming the file, never a crash") {
  ElfBuilder b;
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  b.rela(text, kText + 8, elf::kRX86_64_64, 7);  // symbol 7 of a table with one symbol
  b.symbol("f", static_cast<uint16_t>(text), kText);
  CHECK(error_of(b.build(), kModern) ==
        "vmlinux: has a relocation at 0xffffffff81000008 against symbol 7, past the end of its symbol table");

  ElfBuilder good;
  text = good.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  good.rela(text, kText + 8, elf::kRX86_64_64, good.symbol("f", static_cast<uint16_t>(text), kText));
  std::vector<uint8_t> file = good.build();
  auto ehdr = test::get<elf::Ehdr>(file, 0);

  std::vector<uint8_t> truncated(file.begin(), file.end() - 8);
  CHECK(error_of(truncated, kModern) == "vmlinux: has its section headers outside the file");

  // The .rela section's contents pushed past the end of the file.
  std::vector<uint8_t> bad_rela = file;
  for (uint64_t i = 0; i < ehdr.shnum; ++i) {
    auto sh = test::get<elf::Shdr>(bad_rela, ehdr.shoff + i * sizeof(elf::Shdr));
    if (sh.type != elf::kShtRela) continue;
    sh.offset = bad_rela.size() - 8;
    test::put(bad_rela, ehdr.shoff + i * sizeof(elf::Shdr), sh);
  }
  CHECK(error_of(bad_rela, kModern).starts_with("vmlinux: has section "));

  std::vector<uint8_t> not_elf = file;
  not_elf[0] = 0;
  CHECK(error_of(not_elf, kModern) == "vmlinux: is not an ELF file");
  CHECK(error_of(std::vector<uint8_t>(10, 0), kModern) == "vmlinux: is too small for an ELF header");
}

TEST_CASE("the table format follows the kernel's release") {
  CHECK(relocs_format_for_release("6.1.0-28-cloud-amd64") == kLegacy);
  CHECK(relocs_format_for_release("6.14.11") == kLegacy);
  CHECK(relocs_format_for_release("5.10.0") == kLegacy);
  CHECK(relocs_format_for_release("6.15.0-rc1") == kModern);
  CHECK(relocs_format_for_release("6.16.3-arch1") == kModern);
  CHECK(relocs_format_for_release("7.0.0") == kModern);
  CHECK_FALSE(relocs_format_for_release("6").has_value());
  CHECK_FALSE(relocs_format_for_release("v6.1").has_value());
  CHECK_FALSE(relocs_format_for_release("").has_value());

  ElfBuilder b;
  b.section(".text", kProgbits, kAllocExec, kText);
  b.text("Linux version 6.15.2 (builder@host) (gcc 14) #1 SMP PREEMPT\n");
  CHECK(relocs_format_of_kernel(b.build()) == kModern);
  ElfBuilder old;
  old.text("Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) (gcc-12) #1 SMP Debian 6.1.119-1\n");
  CHECK(relocs_format_of_kernel(old.build()) == kLegacy);
  CHECK_FALSE(relocs_format_of_kernel(ElfBuilder().build()).has_value());
}

TEST_CASE("the on-disk table: encode, parse, and the shape checks") {
  RelocationLists three{kLegacy, {0x81000010}, {0x81000400, 0x81000500}, {0x81000020}};
  std::vector<uint8_t> bytes = encode_relocation_lists(three);
  CHECK(bytes == words({0, 0x81000010, 0, 0x81000400, 0x81000500, 0, 0x81000020}));
  Result<RelocationLists> parsed = split_relocation_lists({bytes, "r"});
  REQUIRE(parsed.ok());
  CHECK(parsed->format == kLegacy);
  CHECK(parsed->relocs64 == three.relocs64);
  CHECK(parsed->inverse32 == three.inverse32);
  CHECK(parsed->relocs32 == three.relocs32);
  CHECK(describe_relocation_lists(*parsed) == "with inverse-32 list (up to 6.14): 64-bit 1, inverse-32 2, 32-bit 1");

  parsed = split_relocation_lists({words({0, 0, 0x81000020, 0x81000030}), "r"});
  REQUIRE(parsed.ok());
  CHECK(parsed->format == kModern);
  CHECK(parsed->relocs64.empty());
  CHECK(parsed->relocs32 == std::vector<uint32_t>{0x81000020, 0x81000030});
  CHECK(describe_relocation_lists(*parsed) == "without inverse-32 list (6.15+): 64-bit 0, 32-bit 2");

  CHECK(split_relocation_lists({{}, "r"}).error().message == "r: relocation table is empty");
  CHECK(split_relocation_lists({std::vector<uint8_t>(10, 0), "r"}).error().message ==
        "r: relocation table size is not a multiple of 4");
  CHECK(split_relocation_lists({words({1, 0, 0}), "r"}).error().message ==
        "r: relocation table does not start with a 0 word");
  CHECK(split_relocation_lists({words({0, 5}), "r"}).error().message ==
        "r: relocation table has neither two nor three 0 words");
  CHECK(split_relocation_lists({words({0, 0, 0, 0}), "r"}).error().message ==
        "r: relocation table has more than three 0 words");
}

namespace {

using test::TempDir;

// A synthetic kernel that load_kernel accepts, with one 64-bit and one 32-bit relocation and the
// banner of `release`.
std::vector<uint8_t> kernel_with_relocs(const std::string& release) {
  ElfBuilder b(test::make_kernel_elf(test::typical_segments()));
  uint32_t text = b.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  uint32_t f = b.symbol("f", static_cast<uint16_t>(text), kText);
  b.rela(text, kText + 0x18, elf::kRX86_64_32S, f);
  b.rela(text, kText + 0x10, elf::kRX86_64_64, f);
  b.text("Linux version " + release + " (a@b) (gcc) #1 SMP\n");
  return b.build();
}

}  // namespace

TEST_CASE("packing takes the table from --relocs, else the stock image, else .rela sections, else none") {
  TempDir dir;
  std::string old_kernel = dir.write("vmlinux-6.1", kernel_with_relocs("6.1.0"));
  std::string new_kernel = dir.write("vmlinux-6.15", kernel_with_relocs("6.15.0"));

  // Computed, in the format of each kernel's release.
  Result<KernelInput> input = load_kernel(Context{.input = old_kernel});
  REQUIRE(input.ok());
  CHECK(input->relocs_origin == RelocsOrigin::kComputed);
  CHECK(input->relocation_table == words({0, 0x81000010, 0, 0, 0x81000018}));
  input = load_kernel(Context{.input = new_kernel});
  REQUIRE(input.ok());
  CHECK(input->relocs_origin == RelocsOrigin::kComputed);
  CHECK(input->relocation_table == words({0, 0x81000010, 0, 0x81000018}));

  // --relocs wins, taken byte for byte.
  std::string given = dir.write("given.relocation_table", words({0, 0x81000100, 0, 0x81000200, 0, 0x81000300}));
  input = load_kernel(Context{.input = old_kernel, .relocs_input = given});
  REQUIRE(input.ok());
  CHECK(input->relocs_origin == RelocsOrigin::kFile);
  CHECK(input->relocation_table == words({0, 0x81000100, 0, 0x81000200, 0, 0x81000300}));

  // A table of the other format, or of the wrong shape, is an error naming the file.
  input = load_kernel(Context{.input = new_kernel, .relocs_input = given});
  REQUIRE_FALSE(input.ok());
  CHECK(input.error().message == given + ": relocation table is with inverse-32 list (up to 6.14) but " + new_kernel +
                                     " expects one without inverse-32 list (6.15+)");
  std::string odd = dir.write("odd.relocation_table", {0, 0, 0, 0, 0, 0});
  input = load_kernel(Context{.input = old_kernel, .relocs_input = odd});
  REQUIRE_FALSE(input.ok());
  CHECK(input.error().message == odd + ": relocation table size is not a multiple of 4");
  input = load_kernel(Context{.input = old_kernel, .relocs_input = dir.path() + "/missing"});
  REQUIRE_FALSE(input.ok());
  CHECK(input.error().message.starts_with(dir.path() + "/missing: "));

  // No .rela sections: no table (the caller warns).
  std::string plain = dir.write("plain", test::make_kernel_elf(test::typical_segments()));
  input = load_kernel(Context{.input = plain});
  REQUIRE(input.ok());
  CHECK(input->relocs_origin == RelocsOrigin::kNone);
  CHECK(input->relocation_table.empty());

  // .rela sections but no banner: the format is unknown, so it is an error rather than a guess.
  ElfBuilder no_banner(test::make_kernel_elf(test::typical_segments()));
  uint32_t text = no_banner.section(".text", kProgbits, kAllocExec, kText, 0x1000);
  no_banner.rela(text, kText + 0x10, elf::kRX86_64_64, no_banner.symbol("f", static_cast<uint16_t>(text), kText));
  std::string anonymous = dir.write("anonymous", no_banner.build());
  input = load_kernel(Context{.input = anonymous});
  REQUIRE_FALSE(input.ok());
  CHECK(input.error().message == anonymous +
                                     ": has .rela sections but no 'Linux version' banner to tell which "
                                     "relocation table format it expects (give one with --relocs FILE)");
  input = load_kernel(Context{.input = anonymous, .relocs_input = given});  // --relocs settles it
  REQUIRE(input.ok());
  CHECK(input->relocs_origin == RelocsOrigin::kFile);
}
