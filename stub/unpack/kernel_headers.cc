#include "stub/unpack/kernel_headers.h"

#include "formats/elf64.h"

namespace kpack {
namespace {

StubStatus check_ident(const elf::Ehdr& ehdr) {
  for (int i = 0; i < 4; ++i)
    if (ehdr.ident[i] != elf::kMagic[i]) return fail("not an ELF file");
  if (ehdr.ident[4] != elf::kClass64) return fail("not a 64-bit ELF (ELFCLASS)", ehdr.ident[4]);
  if (ehdr.ident[5] != elf::kDataLittle) return fail("not a little-endian ELF", ehdr.ident[5]);
  if (ehdr.ident[6] != elf::kVersionCurrent) return fail("bad ELF version", ehdr.ident[6]);
  if (ehdr.machine != elf::kMachineX86_64) return fail("not an x86-64 ELF (e_machine)", ehdr.machine);
  if (ehdr.type != elf::kTypeExec) return fail("not an executable ELF (e_type)", ehdr.type);
  return StubStatus::success();
}

StubStatus check_segment(const LoadSegment& s, uint64_t file_size) {
  if (s.filesz > s.memsz) return fail("segment's p_filesz exceeds p_memsz", s.filesz, s.memsz);
  if (range_of(s.offset, s.filesz).empty() && s.filesz) return fail("segment's file range wraps around", s.offset);
  if (s.offset + s.filesz > file_size) return fail("segment extends past the end of the file", s.offset, s.filesz);
  Range phys = range_of(s.paddr, s.memsz);
  if (phys.empty() && s.memsz) return fail("segment's physical range wraps around", s.paddr, s.memsz);
  if (s.paddr < kLowestSegmentAddress) return fail("segment below 1 MiB", s.paddr);
  if (phys.end > kHighestSegmentEnd) return fail("segment above 4 GiB", s.paddr, s.memsz);
  return StubStatus::success();
}

// The program headers lie within the bytes given, after the ELF header.
StubStatus find_program_headers(const uint8_t* bytes, uint64_t size, const elf::Ehdr& ehdr, const elf::Phdr** phdrs,
                                uint64_t* headers_end) {
  if (ehdr.phentsize != sizeof(elf::Phdr)) return fail("bad e_phentsize", ehdr.phentsize);
  if (ehdr.phnum == 0 || ehdr.phnum > kMaxProgramHeaders) return fail("bad e_phnum", ehdr.phnum);
  uint64_t phoff = ehdr.phoff;
  uint64_t phsize = uint64_t{ehdr.phnum} * sizeof(elf::Phdr);
  if (phoff < sizeof(elf::Ehdr) || phoff > size || phsize > size - phoff)
    return fail("program headers outside the ELF headers", phoff, phsize);
  *phdrs = reinterpret_cast<const elf::Phdr*>(bytes + phoff);
  *headers_end = phoff + phsize;
  return StubStatus::success();
}

// Every PT_LOAD that takes memory, checked, in file order: the stream delivers segments in that order.
StubStatus collect_segments(const elf::Phdr* phdrs, uint32_t count, uint64_t file_size, KernelHeaders& kernel) {
  for (uint32_t i = 0; i < count; ++i) {
    const elf::Phdr& p = phdrs[i];
    if (p.type != elf::kPtLoad || p.memsz == 0) continue;
    if (kernel.segment_count == kMaxLoadSegments) return fail("too many PT_LOAD segments", count);
    LoadSegment s{p.offset, p.paddr, p.vaddr, p.filesz, p.memsz, p.align, p.flags};
    KPACK_TRY(check_segment(s, file_size));
    // Insertion sort by file offset. At equal offsets a segment with no file bytes goes first: it
    // ends where the other begins.
    uint32_t at = kernel.segment_count++;
    while (at > 0 && (kernel.segments[at - 1].offset > s.offset ||
                      (kernel.segments[at - 1].offset == s.offset && kernel.segments[at - 1].filesz > s.filesz))) {
      kernel.segments[at] = kernel.segments[at - 1];
      --at;
    }
    kernel.segments[at] = s;
  }
  if (kernel.segment_count == 0) return fail("no PT_LOAD segment");
  return StubStatus::success();
}

// No two segments share bytes in the file or in memory, and none reaches back into the headers;
// the kernel's physical range and file end follow from them.
StubStatus measure_segments(KernelHeaders& kernel) {
  kernel.physical = Range{~0ull, 0};
  for (uint32_t i = 0; i < kernel.segment_count; ++i) {
    const LoadSegment& s = kernel.segments[i];
    if (i > 0 && s.offset < kernel.segments[i - 1].offset + kernel.segments[i - 1].filesz)
      return fail("segments overlap in the file", kernel.segments[i - 1].offset, s.offset);
    Range phys = range_of(s.paddr, s.memsz);
    for (uint32_t j = 0; j < i; ++j)
      if (phys.overlaps(range_of(kernel.segments[j].paddr, kernel.segments[j].memsz)))
        return fail("segments overlap in memory", kernel.segments[j].paddr, s.paddr);
    if (phys.begin < kernel.physical.begin) kernel.physical.begin = phys.begin;
    if (phys.end > kernel.physical.end) kernel.physical.end = phys.end;
  }
  if (kernel.segments[0].offset < kernel.headers_end)
    return fail("first segment overlaps the ELF headers", kernel.segments[0].offset);
  const LoadSegment& last = kernel.segments[kernel.segment_count - 1];
  kernel.file_end = last.offset + last.filesz;
  return StubStatus::success();
}

// The entry lies in a segment, whatever its flags: the stock decompressor jumps to
// e_entry's offset from the load address (arch/x86/boot/compressed/misc.c, parse_elf) and never
// reads p_flags, and since 6.18 startup_64 sits in .init.text, inside the RW segment. The lowest
// segment's p_align is the kernel's alignment.
StubStatus check_entry_and_alignment(KernelHeaders& kernel) {
  uint64_t alignment = 0;
  bool entry_ok = false;
  for (uint32_t i = 0; i < kernel.segment_count; ++i) {
    const LoadSegment& s = kernel.segments[i];
    if (s.paddr == kernel.physical.begin) alignment = s.align;
    if (kernel.entry >= s.paddr && kernel.entry - s.paddr < s.memsz) entry_ok = true;
  }
  if (!entry_ok) return fail("e_entry must lie in a PT_LOAD segment's memory", kernel.entry);
  if (alignment < kMinKernelAlignment) alignment = kMinKernelAlignment;
  if (!is_power_of_two(alignment) || alignment > (1ull << 30)) return fail("bad segment alignment", alignment);
  if (kernel.physical.begin % alignment)
    return fail("lowest segment is not aligned to its p_align", kernel.physical.begin);
  kernel.alignment = alignment;
  return StubStatus::success();
}

}  // namespace

StubStatus parse_kernel_headers(const uint8_t* bytes, uint64_t size, uint64_t file_size, KernelHeaders* out) {
  if (size < sizeof(elf::Ehdr)) return fail("truncated ELF header", size);
  const auto& ehdr = *reinterpret_cast<const elf::Ehdr*>(bytes);
  KPACK_TRY(check_ident(ehdr));
  KernelHeaders kernel;
  kernel.entry = ehdr.entry;
  const elf::Phdr* phdrs = nullptr;
  KPACK_TRY(find_program_headers(bytes, size, ehdr, &phdrs, &kernel.headers_end));
  KPACK_TRY(collect_segments(phdrs, ehdr.phnum, file_size, kernel));
  KPACK_TRY(measure_segments(kernel));
  KPACK_TRY(check_entry_and_alignment(kernel));
  *out = kernel;
  return StubStatus::success();
}

bool is_physically_mirrored(const KernelHeaders& kernel) {
  const LoadSegment& first = kernel.segments[0];
  if (first.paddr != kernel.physical.begin) return false;
  for (uint32_t i = 0; i < kernel.segment_count; ++i) {
    const LoadSegment& s = kernel.segments[i];
    if (s.offset - first.offset != s.paddr - first.paddr) return false;
  }
  return true;
}

bool is_physically_ordered(const KernelHeaders& kernel) {
  const LoadSegment& first = kernel.segments[0];
  if (first.paddr != kernel.physical.begin) return false;
  for (uint32_t i = 1; i < kernel.segment_count; ++i) {
    const LoadSegment& s = kernel.segments[i];
    const LoadSegment& before = kernel.segments[i - 1];
    if (s.paddr < before.paddr || s.offset < before.offset + before.filesz) return false;
    if (s.offset - first.offset > s.paddr - first.paddr) return false;
  }
  return true;
}

}  // namespace kpack
