// Small, valid vmlinux-like ELF files built in memory, for tests, fuzz seeds and benchmarks.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "formats/elf64.h"

namespace kpack::test {

struct SegmentSpec {
  uint64_t paddr;
  uint64_t filesz;
  uint64_t memsz;
  uint32_t flags = elf::kPfR | elf::kPfX;
  uint64_t vaddr = ~0ull;  // default: paddr in the x86-64 kernel map
};

// Segments laid out in the file in the order given, page-aligned, filled with pseudo-random but
// compressible bytes; a PT_NOTE inside the first segment; entry at the first segment's start.
inline std::vector<uint8_t> make_kernel_elf(const std::vector<SegmentSpec>& specs, uint32_t seed = 1) {
  std::mt19937 random(seed);
  uint64_t phnum = specs.size() + 1;
  uint64_t offset = 0x1000;
  std::vector<uint64_t> offsets;
  for (const SegmentSpec& s : specs) {
    offsets.push_back(offset);
    offset = (offset + s.filesz + 0xFFF) & ~0xFFFull;
  }
  std::vector<uint8_t> file(offset, 0);
  elf::Ehdr ehdr{};
  const uint8_t ident[16] = {0x7F, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(ehdr.ident, ident, 16);
  ehdr.type = elf::kTypeExec;
  ehdr.machine = elf::kMachineX86_64;
  ehdr.version = 1;
  ehdr.entry = specs[0].paddr;
  ehdr.phoff = sizeof(elf::Ehdr);
  ehdr.ehsize = sizeof(elf::Ehdr);
  ehdr.phentsize = sizeof(elf::Phdr);
  ehdr.phnum = static_cast<uint16_t>(phnum);
  std::memcpy(file.data(), &ehdr, sizeof(ehdr));
  for (size_t i = 0; i < specs.size(); ++i) {
    const SegmentSpec& s = specs[i];
    elf::Phdr p{};
    p.type = elf::kPtLoad;
    p.flags = s.flags;
    p.offset = offsets[i];
    p.vaddr = s.vaddr != ~0ull ? s.vaddr : s.paddr + 0xFFFFFFFF80000000ull;
    p.paddr = s.paddr;
    p.filesz = s.filesz;
    p.memsz = s.memsz;
    p.align = 0x200000;
    std::memcpy(file.data() + sizeof(ehdr) + i * sizeof(elf::Phdr), &p, sizeof(p));
    // Runs of repeated bytes mixed with noise: compressible, but not trivially.
    for (uint64_t b = 0; b < s.filesz; ++b)
      file[offsets[i] + b] = (b / 64) % 3 == 0 ? static_cast<uint8_t>(random()) : static_cast<uint8_t>(b / 256);
  }
  elf::Phdr note{};
  note.type = elf::kPtNote;
  note.offset = offsets[0];
  note.filesz = 16;
  note.paddr = specs[0].paddr;
  std::memcpy(file.data() + sizeof(ehdr) + specs.size() * sizeof(elf::Phdr), &note, sizeof(note));
  return file;
}

// A kernel shaped like the Debian cloud kernel, scaled down: 2 MiB-aligned text, data, a per-cpu
// segment with virtual address 0, and init+bss with memsz > filesz.
inline std::vector<SegmentSpec> typical_segments() {
  return {
      {0x1000000, 0x23000, 0x23000, elf::kPfR | elf::kPfX},
      {0x1200000, 0x9000, 0x9000, elf::kPfR | elf::kPfW},
      {0x1209000, 0x2000, 0x2000, elf::kPfR | elf::kPfW, 0},
      {0x120B000, 0x6000, 0x9000, elf::kPfR | elf::kPfW | elf::kPfX},
  };
}

// Appends `sections` (section 0 included) as the file's section header table and points the ELF
// header at it.
inline void append_section_headers(std::vector<uint8_t>& elf, const std::vector<elf::Shdr>& sections) {
  auto* header = reinterpret_cast<elf::Ehdr*>(elf.data());
  header->shoff = elf.size();
  header->shentsize = sizeof(elf::Shdr);
  header->shnum = static_cast<uint16_t>(sections.size());
  const auto* table = reinterpret_cast<const uint8_t*>(sections.data());
  elf.insert(elf.end(), table, table + sections.size() * sizeof(elf::Shdr));
}

}  // namespace kpack::test
