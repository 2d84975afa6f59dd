// The VMM ELF checker (tests/support/vmm_elf_rules.h) takes what kpack writes, and rejects each
// rule's violation: a checker that passes everything would let CI pass anything.
#include <doctest/doctest.h>

#include <functional>

#include "formats/elf64.h"
#include "tests/support/bytes.h"
#include "tests/support/elf_image.h"
#include "tests/support/packed_image.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/vmm_elf_rules.h"

using namespace kpack;

TEST_CASE("the VMM ELF checker rejects each rule's violation") {
  const std::vector<uint8_t> good = test::pack_elf(test::synthetic_input(), Codec::kLz4).bytes;
  REQUIRE(test::check_vmm_elf(good).ok());
  struct Case {
    const char* rule;
    std::function<void(std::vector<uint8_t>&)> damage;
  };
  // Offsets: e_ident 0, e_entry 24, e_phoff 32, e_flags 48, e_phentsize 54; the PT_LOAD at 64
  // (p_offset 72, p_paddr 88, p_filesz 96, p_memsz 104, p_align 112), the PT_NOTE at 120 (p_align
  // 168), Xen's note at 176 (namesz 176, descsz 180, type 184, name 188, descriptor 192).
  const Case cases[] = {
      {"rust-vmm ReadElfHeader", [](auto& f) { f.resize(63); }},
      {"rust-vmm InvalidElfMagicNumber", [](auto& f) { f[1] = 'e'; }},
      {"class", [](auto& f) { f[4] = 1; }},
      {"rust-vmm BigEndianElfOnLittle", [](auto& f) { f[5] = 2; }},
      {"machine", [](auto& f) { test::put(f, 18, uint16_t{3}); }},
      {"rust-vmm InvalidProgramHeaderSize", [](auto& f) { test::put(f, 54, uint16_t{64}); }},
      {"rust-vmm InvalidProgramHeaderOffset", [](auto& f) { test::put(f, 32, uint64_t{32}); }},
      {"rust-vmm InvalidEntryAddress", [](auto& f) { test::put(f, 24, uint64_t{0xFFFFF}); }},
      {"rust-vmm ReadProgramHeader", [](auto& f) { test::put(f, 32, uint64_t{f.size() - 100}); }},
      {"rust-vmm Align", [](auto& f) { test::put(f, 112, uint64_t{0x1000}); }},
      {"rust-vmm ReadKernelImage", [](auto& f) { f.resize(f.size() - 1); }},
      {"QEMU ELF_LOAD_TOO_BIG", [](auto& f) { test::put(f, 104, uint64_t{0x1000}); }},
      {"below 1 MiB",
       [](auto& f) {
         test::put(f, 80, uint64_t{0x1000});
         test::put(f, 88, uint64_t{0x1000});
       }},
      {"ELF congruence", [](auto& f) { test::put(f, 80, uint64_t{0x202000}); }},
      {"rust-vmm PvhEntryNotPresent", [](auto& f) { test::put(f, 184, uint32_t{17}); }},
      {"rust-vmm PvhEntryNotPresent", [](auto& f) { f[188] = 'x'; }},
      {"rust-vmm InvalidPvhNote", [](auto& f) { test::put(f, 180, uint32_t{2}); }},
      {"QEMU note", [](auto& f) { test::put(f, 168, uint64_t{0}); }},
      {"QEMU note", [](auto& f) { test::put(f, 152, uint64_t{20}); }},  // the PT_NOTE cuts Xen's descriptor
      {"QEMU PVH note", [](auto& f) { test::put(f, 192, uint64_t{0}); }},
      {"QEMU PVH note", [](auto& f) { test::put(f, 196, uint32_t{1}); }},     // the entry's upper half
      {"PVH entry", [](auto& f) { test::put(f, 192, uint64_t{0x100000}); }},  // not in loaded bytes
      {"e_entry", [](auto& f) { test::put(f, 24, uint64_t{0x100000}); }},
      {"QEMU bzImage", [](auto& f) { test::put(f, 0x202, uint32_t{0x53726448}); }},
      {"QEMU multiboot",
       [](auto& f) {
         test::put(f, 0x400, uint32_t{0x1BADB002});
         test::put(f, 0x404, uint32_t{0});
         test::put(f, 0x408, uint32_t{0u - 0x1BADB002u});
       }},
      {"QEMU elfboot flags", [](auto& f) { test::put(f, 48, uint32_t{4}); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    std::vector<uint8_t> bad = good;
    c.damage(bad);
    test::VmmElfVerdict verdict = test::check_vmm_elf(bad);
    CAPTURE(verdict.violations);
    CHECK(verdict.violates(c.rule));
  }
  // A multiboot magic without its checksum is not a header: QEMU goes on to the ELF.
  std::vector<uint8_t> magic_only = good;
  test::put(magic_only, 0x400, uint32_t{0x1BADB002});
  CHECK(test::check_vmm_elf(magic_only).ok());
}

TEST_CASE("the VMM ELF checker reads the PVH note as both loaders do") {
  // rust-vmm takes a 4-byte descriptor, QEMU reads 8 bytes there: with the PT_NOTE ending after 4,
  // QEMU reads past it.
  std::vector<uint8_t> f = test::pack_elf(test::synthetic_input(), Codec::kLz4).bytes;
  test::VmmElfVerdict verdict = test::check_vmm_elf(f);
  REQUIRE(verdict.ok());
  CHECK(verdict.pvh_entry == 0x201000 + test::kTestPvhEntry);
  CHECK(verdict.entry == 0x201200);
  CHECK(verdict.load_segments == 1);
  test::put(f, 180, uint32_t{4});  // descsz 4: the kpack note now starts inside Xen's descriptor
  test::put(f, 152, uint64_t{24});
  verdict = test::check_vmm_elf(f);
  CHECK_FALSE(verdict.violates("rust-vmm"));
  CHECK_FALSE(verdict.violates("QEMU note"));  // the 8 bytes still lie inside the 24-byte PT_NOTE
  test::put(f, 152, uint64_t{20});
  CHECK(test::check_vmm_elf(f).violates("QEMU note"));
}
