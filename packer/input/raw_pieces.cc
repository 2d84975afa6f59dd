#include "packer/input/raw_pieces.h"

#include <cstring>
#include <utility>

#include "formats/elf64.h"
#include "packer/base/byte_io.h"

namespace kpack {

bool mirrors_physical(const KernelHeaders& k) {
  for (uint32_t i = 1; i < k.segment_count; ++i)
    if (k.segments[i].offset - k.segments[0].offset != k.segments[i].paddr - k.segments[0].paddr) return false;
  return true;
}

bool continues_piece(const KernelHeaders& k, uint32_t i) {
  if (i == 0 || i >= k.segment_count) return false;
  const LoadSegment &s = k.segments[i], &before = k.segments[i - 1];
  return s.align == 4096 && s.flags == before.flags && s.paddr == before.paddr + before.memsz &&
         s.vaddr == before.vaddr + before.memsz && before.filesz;
}

uint64_t left_out_zeros(const KernelHeaders& k, uint32_t* runs) {
  uint64_t bytes = 0;
  *runs = 0;
  for (uint32_t i = 1; i < k.segment_count; ++i)
    if (continues_piece(k, i)) bytes += k.segments[i - 1].memsz - k.segments[i - 1].filesz, ++*runs;
  return bytes;
}

std::vector<uint8_t> join_left_out_zeros(std::vector<uint8_t> elf, uint64_t max_size) {
  KernelHeaders k;
  if (!parse_kernel_headers(elf.data(), elf.size(), elf.size(), &k).ok()) return elf;
  uint32_t runs = 0;
  left_out_zeros(k, &runs);
  if (!runs) return elf;
  // One placement per joined segment: its first piece's header, grown over the others.
  const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(elf.data());
  const auto* phdrs = reinterpret_cast<const elf::Phdr*>(elf.data() + ehdr.phoff);
  std::vector<elf::Phdr> out_phdrs;
  std::vector<std::pair<uint32_t, uint32_t>> groups;  // [first, last] segment indices
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    if (continues_piece(k, i))
      groups.back().second = i;
    else
      groups.push_back({i, i});
  }
  auto header_of = [&](const LoadSegment& s) {
    for (uint32_t i = 0; i < ehdr.phnum; ++i)
      if (phdrs[i].type == elf::kPtLoad && phdrs[i].offset == s.offset && phdrs[i].paddr == s.paddr && phdrs[i].memsz)
        return phdrs[i];
    __builtin_trap();  // parse_kernel_headers read every segment from a header
  };
  // Segments at page-aligned offsets one after another, as in the compact layout.
  uint64_t at = sizeof(elf::Ehdr) + uint64_t{ehdr.phnum} * sizeof(elf::Phdr);
  std::vector<uint8_t> out;
  struct Copy {
    uint64_t from, to, size;
  };
  std::vector<Copy> copies;
  for (auto [first, last] : groups) {
    const LoadSegment &head = k.segments[first], &tail = k.segments[last];
    elf::Phdr p = header_of(head);
    p.offset = align_up(at, 4096) + (head.vaddr & 0xFFF);
    p.filesz = (tail.paddr - head.paddr) + tail.filesz;
    p.memsz = (tail.paddr - head.paddr) + tail.memsz;
    for (uint32_t i = first; i <= last; ++i)
      copies.push_back({k.segments[i].offset, p.offset + (k.segments[i].paddr - head.paddr), k.segments[i].filesz});
    at = p.offset + p.filesz;
    out_phdrs.push_back(p);
    if (at > max_size) return elf;
  }
  // Other headers (PT_NOTE) follow their bytes; a PT_LOAD without memory keeps its place.
  for (uint32_t i = 0; i < ehdr.phnum; ++i) {
    elf::Phdr p = phdrs[i];
    if (p.type == elf::kPtLoad && p.memsz) continue;
    for (const Copy& c : copies)
      if (p.filesz && p.offset >= c.from && p.offset + p.filesz <= c.from + c.size)
        p.offset = c.to + (p.offset - c.from);
    out_phdrs.push_back(p);
  }
  out.assign(at, 0);
  elf::Ehdr new_ehdr = ehdr;
  new_ehdr.phoff = sizeof(elf::Ehdr);
  new_ehdr.phnum = static_cast<uint16_t>(out_phdrs.size());
  std::memcpy(out.data(), &new_ehdr, sizeof(new_ehdr));
  std::memcpy(out.data() + sizeof(new_ehdr), out_phdrs.data(), out_phdrs.size() * sizeof(elf::Phdr));
  for (const Copy& c : copies) std::memcpy(out.data() + c.to, elf.data() + c.from, c.size);
  return out;
}

}  // namespace kpack
