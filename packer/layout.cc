#include "packer/layout.h"

#include <algorithm>
#include <cstring>

#include "formats/elf64.h"
#include "packer/byte_io.h"

namespace kpack {
namespace {

struct Placement {
  uint64_t paddr;  // identifies the segment: two bss-only segments may share an offset and size
  uint64_t old_offset;
  uint64_t new_offset;
  uint64_t old_filesz;
  uint64_t new_filesz;
};

// Writes the ELF header and the program headers with segment offsets moved as `placements` say.
// Headers of other types keep pointing at the same bytes when those lie inside a moved segment.
PayloadElf rewrite(const KernelInput& input, const std::vector<Placement>& placements, uint64_t file_size) {
  const auto& old_ehdr = *reinterpret_cast<const elf::Ehdr*>(input.elf.data());
  const auto* old_phdrs = reinterpret_cast<const elf::Phdr*>(input.elf.data() + old_ehdr.phoff);

  PayloadElf out;
  out.bytes.assign(file_size, 0);
  elf::Ehdr ehdr = old_ehdr;
  ehdr.phoff = sizeof(elf::Ehdr);
  ehdr.shoff = 0;
  ehdr.shnum = 0;
  ehdr.shentsize = sizeof(elf::Shdr);
  ehdr.shstrndx = 0;

  std::vector<elf::Phdr> phdrs;
  for (uint32_t i = 0; i < old_ehdr.phnum; ++i) {
    elf::Phdr p = old_phdrs[i];
    bool placed = false;
    for (const Placement& m : placements) {
      bool is_segment = p.type == elf::kPtLoad && p.paddr == m.paddr && p.offset == m.old_offset &&
                        p.filesz == m.old_filesz && p.memsz;
      if (is_segment) {
        p.offset = m.new_offset;
        p.filesz = m.new_filesz;
        placed = true;
        break;
      }
      if (p.type != elf::kPtLoad && p.filesz && p.offset >= m.old_offset &&
          p.offset + p.filesz <= m.old_offset + std::min(m.old_filesz, m.new_filesz)) {
        p.offset = m.new_offset + (p.offset - m.old_offset);
        placed = true;
        break;
      }
    }
    if (!placed && p.filesz) continue;  // points at bytes that are not kept
    if (!placed) p.offset = 0;
    phdrs.push_back(p);
  }
  ehdr.phnum = static_cast<uint16_t>(phdrs.size());
  std::memcpy(out.bytes.data(), &ehdr, sizeof(ehdr));
  std::memcpy(out.bytes.data() + sizeof(ehdr), phdrs.data(), phdrs.size() * sizeof(elf::Phdr));
  for (const Placement& m : placements)
    std::memcpy(out.bytes.data() + m.new_offset, input.elf.data() + m.old_offset, std::min(m.old_filesz, m.new_filesz));
  StubStatus status = parse_kernel_headers(out.bytes.data(), out.bytes.size(), out.bytes.size(), &out.kernel);
  if (!status.ok()) __builtin_trap();  // the input was valid, so its rewrite must be
  return out;
}

// Bytes of the segment up to its last non-zero one: the rest can be bss, which the stub zeroes at
// a fraction of the cost of decoding and checksumming zeros (11.8 MB of them in Debian's 6.1).
uint64_t without_trailing_zeros(const KernelInput& input, const LoadSegment& s) {
  uint64_t size = s.filesz;
  while (size > 0 && input.elf[s.offset + size - 1] == 0) --size;
  return size;
}

// The bytes of machine code a read-only executable segment starts with: the run of SHF_EXECINSTR
// sections from its first byte, padding between them included (a kernel's .text, before its
// read-only data); the whole segment without section headers. Measured on Debian's 6.1 kernel
// with xz: BCJ over the code alone saves 13 KB against the whole text segment; the writable
// segment (init code and data mixed, 0.5 MB of code) comes out smallest without BCJ at all.
uint64_t leading_code(const KernelInput& input, const LoadSegment& s) {
  if (!(s.flags & elf::kPfX) || (s.flags & elf::kPfW)) return 0;
  const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(input.elf.data());
  uint64_t count = ehdr.shnum, entry = ehdr.shentsize, table = ehdr.shoff, size = input.elf.size();
  if (table == 0 || count == 0 || entry < sizeof(elf::Shdr) || table > size || count > (size - table) / entry)
    return s.filesz;
  // Sections in file order, as linkers write them: one pass.
  uint64_t end = s.offset, segment_end = s.offset + s.filesz;
  for (uint64_t i = 0; i < count; ++i) {
    const auto sh = get<elf::Shdr>(input.elf, table + i * entry);
    if (sh.type == elf::kShtNobits || !(sh.flags & elf::kShfExecInstr) || sh.size == 0) continue;
    // The first code section starts the segment; each next one follows the last, after at most
    // the padding its alignment asks for.
    bool next = end == s.offset ? sh.offset == s.offset : sh.offset >= end && sh.offset - end < 4096;
    if (next && sh.offset < segment_end && sh.size <= segment_end - sh.offset) end = sh.offset + sh.size;
  }
  return end - s.offset;
}

uint64_t headers_size(const KernelInput& input) {
  const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(input.elf.data());
  return sizeof(elf::Ehdr) + uint64_t{ehdr.phnum} * sizeof(elf::Phdr);
}

}  // namespace

PayloadElf layout_compact(const KernelInput& input) {
  const KernelHeaders& k = input.kernel;
  std::vector<Placement> placements;
  std::vector<uint64_t> code;  // per placement
  uint64_t at = headers_size(input);
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    // Keep p_offset congruent to p_vaddr modulo the page size, as ELF loaders expect.
    uint64_t offset = align_up(at, 4096) + (s.vaddr & 0xFFF);
    uint64_t kept = without_trailing_zeros(input, s);
    placements.push_back({s.paddr, s.offset, offset, s.filesz, kept});
    code.push_back(std::min(leading_code(input, s), kept));
    at = offset + kept;
  }
  PayloadElf out = rewrite(input, placements, at);
  // One region per frame: the headers, then each gap and each segment (its code, then the rest).
  uint64_t cursor = 0;
  for (uint32_t i = 0; i < out.kernel.segment_count; ++i) {
    const LoadSegment& s = out.kernel.segments[i];
    if (s.offset > cursor) out.regions.push_back(Range{cursor, s.offset});
    uint64_t code_size = 0;
    for (size_t j = 0; j < placements.size(); ++j)
      if (placements[j].paddr == s.paddr) code_size = std::min(code[j], s.filesz);
    if (code_size) {
      out.regions.push_back(Range{s.offset, s.offset + code_size});
      out.code.push_back(out.regions.back());
    }
    if (s.filesz > code_size) out.regions.push_back(Range{s.offset + code_size, s.offset + s.filesz});
    cursor = s.offset + s.filesz;
  }
  return out;
}

PayloadElf layout_mirrored(const KernelInput& input, uint64_t first_offset) {
  const KernelHeaders& k = input.kernel;
  // The segment highest in memory ends the file: its trailing zeros (the kernel's bss, 12 MB of
  // Debian's 6.1) are left to the stub. Every other one is followed by the next one's bytes, so
  // its zeros stay in the file anyway, and stay stored.
  uint32_t highest = 0;
  for (uint32_t i = 1; i < k.segment_count; ++i)
    if (k.segments[i].paddr > k.segments[highest].paddr) highest = i;
  std::vector<Placement> placements;
  uint64_t end = first_offset;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t offset = first_offset + (s.paddr - k.physical.begin);
    uint64_t kept = i == highest ? without_trailing_zeros(input, s) : s.memsz;
    placements.push_back({s.paddr, s.offset, offset, s.filesz, kept});
    end = std::max(end, offset + kept);
  }
  PayloadElf out = rewrite(input, placements, end);
  out.regions.push_back(Range{0, end});
  return out;
}

}  // namespace kpack
