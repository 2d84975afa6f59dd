#include "packer/image/layout.h"

#include <algorithm>
#include <cstring>

#include "formats/elf64.h"
#include "packer/base/byte_io.h"
#include "packer/input/relocs_table.h"

namespace kpack {
namespace {

// A part of a segment that keeps its own program header: a segment is one piece, or several when
// runs of zero pages inside it are left out of the file (each piece then ends in bss that reaches
// the next one).
struct Piece {
  uint64_t skip;  // from the segment's start, in memory and in the source file alike
  uint64_t new_offset;
  uint64_t filesz;  // may pass the source's p_filesz (the mirrored layout stores bss as zeros)
  uint64_t memsz;
};

struct Placement {
  uint64_t paddr;  // identifies the segment: two bss-only segments may share an offset and size
  uint64_t old_offset;
  uint64_t old_filesz;
  std::vector<Piece> pieces;  // in order; their bytes are copied from old_offset + skip

  // The bytes of `piece` the source file holds.
  uint64_t source_bytes(const Piece& piece) const {
    return piece.skip >= old_filesz ? 0 : std::min(piece.filesz, old_filesz - piece.skip);
  }
};

bool is_segment_of(const elf::Phdr& p, const Placement& m) {
  return p.type == elf::kPtLoad && p.paddr == m.paddr && p.offset == m.old_offset && p.filesz == m.old_filesz &&
         p.memsz;
}

// Headers of other types (PT_NOTE) keep pointing at the same bytes when those lie inside a kept
// piece; false when they do not.
bool follow_bytes(elf::Phdr& p, const std::vector<Placement>& placements) {
  for (const Placement& m : placements)
    for (const Piece& piece : m.pieces) {
      uint64_t begin = m.old_offset + piece.skip;
      if (p.offset >= begin && p.offset + p.filesz <= begin + m.source_bytes(piece)) {
        p.offset = piece.new_offset + (p.offset - begin);
        return true;
      }
    }
  return false;
}

// Writes the ELF header and the program headers with segment offsets moved as `placements` say, a
// program header per piece.
PayloadElf rewrite(const KernelInput& input, const std::vector<Placement>& placements, uint64_t file_size) {
  const auto& old_ehdr = *reinterpret_cast<const elf::Ehdr*>(input.elf.data());
  const auto* old_phdrs = reinterpret_cast<const elf::Phdr*>(input.elf.data() + old_ehdr.phoff);

  PayloadElf out;
  out.bytes.assign(file_size, 0);
  elf::Ehdr ehdr = old_ehdr;
  // The header and the table as written here, whatever sizes the input's header claimed (an
  // e_ehsize past the end made an image `kpack extract` refused).
  ehdr.ehsize = sizeof(elf::Ehdr);
  ehdr.phentsize = sizeof(elf::Phdr);
  ehdr.phoff = sizeof(elf::Ehdr);
  ehdr.shoff = 0;
  ehdr.shnum = 0;
  ehdr.shentsize = sizeof(elf::Shdr);
  ehdr.shstrndx = 0;

  std::vector<elf::Phdr> phdrs;
  for (uint32_t i = 0; i < old_ehdr.phnum; ++i) {
    elf::Phdr p = old_phdrs[i];
    auto segment =
        std::find_if(placements.begin(), placements.end(), [&](const Placement& m) { return is_segment_of(p, m); });
    if (segment != placements.end()) {
      for (const Piece& piece : segment->pieces) {
        elf::Phdr q = p;
        q.offset = piece.new_offset;
        q.paddr = p.paddr + piece.skip;
        q.vaddr = p.vaddr + piece.skip;
        q.filesz = piece.filesz;
        q.memsz = piece.memsz;
        if (piece.skip) q.align = 4096;
        phdrs.push_back(q);
      }
      continue;
    }
    bool placed = p.type != elf::kPtLoad && p.filesz && follow_bytes(p, placements);
    if (!placed && p.filesz) continue;  // points at bytes that are not kept
    if (!placed) p.offset = 0;
    phdrs.push_back(p);
  }
  ehdr.phnum = static_cast<uint16_t>(phdrs.size());
  std::memcpy(out.bytes.data(), &ehdr, sizeof(ehdr));
  std::memcpy(out.bytes.data() + sizeof(ehdr), phdrs.data(), phdrs.size() * sizeof(elf::Phdr));
  for (const Placement& m : placements)
    for (const Piece& piece : m.pieces)
      std::memcpy(out.bytes.data() + piece.new_offset, input.elf.data() + m.old_offset + piece.skip,
                  m.source_bytes(piece));
  StubStatus status = parse_kernel_headers(out.bytes.data(), out.bytes.size(), out.bytes.size(), &out.kernel);
  if (!status.ok()) __builtin_trap();  // the input was valid, so its rewrite must be
  return out;
}

// Bytes of the segment up to its last non-zero one: the rest can be bss, which the stub zeroes at
// a fraction of the cost of decoding and checksumming zeros (megabytes of them in Debian's kernels).
uint64_t without_trailing_zeros(const KernelInput& input, const LoadSegment& s) {
  uint64_t size = s.filesz;
  while (size > 0 && input.elf[s.offset + size - 1] == 0) --size;
  return size;
}

// The bytes of machine code a read-only executable segment starts with: the run of SHF_EXECINSTR
// sections from its first byte, padding between them included (a kernel's .text, before its
// read-only data); the whole segment without section headers. On Debian's kernels with xz, BCJ over
// the code alone comes out smaller than over the whole text segment, and the writable segment (init
// code and data mixed) smallest without BCJ at all (doc/benchmark-history.md).
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

uint64_t program_header_count(const KernelInput& input) {
  return reinterpret_cast<const elf::Ehdr*>(input.elf.data())->phnum;
}

// The ELF header and a program header table with room for `added` more headers than the input's.
uint64_t headers_size(const KernelInput& input, uint64_t added) {
  return sizeof(elf::Ehdr) + (program_header_count(input) + added) * sizeof(elf::Phdr);
}

// A run of whole zero pages inside a segment's kept bytes, as offsets from the segment's start.
struct ZeroRun {
  uint32_t segment;
  uint64_t begin, end;
  uint64_t size() const { return end - begin; }
};

// The link-time physical places the relocation table patches, each with its width: a zero run
// that holds one is kept (it cannot hold one in a real kernel, where a patched word holds an
// address, but the table is input).
std::vector<Range> relocation_targets(const KernelInput& input) {
  std::vector<Range> targets;
  if (input.relocation_table.empty()) return targets;
  Result<RelocationLists> lists = split_relocation_lists({input.relocation_table, "relocs"});
  if (!lists.ok()) return targets;
  auto add = [&](const std::vector<uint32_t>& entries, uint64_t width) {
    for (uint32_t entry : entries) targets.push_back(range_of(physical_target(entry), width));
  };
  add(lists->relocs64, kRelocation64Width);
  add(lists->inverse32, kRelocationInverse32Width);
  add(lists->relocs32, kRelocation32Width);
  return targets;
}

// The longest runs of at least kMinLeftOutZeros whole zero pages (physical pages) inside the
// segments' kept bytes, in file order, as many as the stub's limits allow: each run adds a PT_LOAD
// (kMaxLoadSegments) and a program header beside every header the input has (kMaxProgramHeaders;
// the rewrite keeps empty headers, so an input of 64 leaves room for none).
// `kept_bytes`: each segment's bytes without its trailing zeros.
std::vector<ZeroRun> zero_runs_to_leave_out(const KernelInput& input, const std::vector<uint64_t>& kept_bytes) {
  const KernelHeaders& k = input.kernel;
  std::vector<Range> targets = relocation_targets(input);
  std::vector<ZeroRun> runs;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t kept = kept_bytes[i];
    const uint8_t* bytes = input.elf.data() + s.offset;
    uint64_t page = align_up(s.paddr, 4096) - s.paddr;  // the first whole physical page
    uint64_t start = 0;
    bool in_run = false;
    for (; page + 4096 <= kept; page += 4096) {
      bool zero = std::all_of(bytes + page, bytes + page + 4096, [](uint8_t b) { return b == 0; });
      if (zero && !in_run) start = page;
      if (!zero && in_run && page - start >= kMinLeftOutZeros) runs.push_back({i, start, page});
      in_run = zero;
    }
    if (in_run && page - start >= kMinLeftOutZeros) runs.push_back({i, start, page});
  }
  std::erase_if(runs, [&](const ZeroRun& run) {
    Range memory = range_of(k.segments[run.segment].paddr + run.begin, run.size());
    return std::any_of(targets.begin(), targets.end(), [&](const Range& t) { return t.overlaps(memory); });
  });
  std::stable_sort(runs.begin(), runs.end(), [](const ZeroRun& a, const ZeroRun& b) { return a.size() > b.size(); });
  uint64_t room =
      std::min<uint64_t>(kMaxLoadSegments - k.segment_count,
                         kMaxProgramHeaders - std::min<uint64_t>(program_header_count(input), kMaxProgramHeaders));
  if (runs.size() > room) runs.resize(room);
  std::sort(runs.begin(), runs.end(), [](const ZeroRun& a, const ZeroRun& b) {
    return a.segment != b.segment ? a.segment < b.segment : a.begin < b.begin;
  });
  return runs;
}

}  // namespace

PayloadElf layout_compact(const KernelInput& input, InnerZeros inner_zeros) {
  const KernelHeaders& k = input.kernel;
  std::vector<uint64_t> kept_bytes;
  for (uint32_t i = 0; i < k.segment_count; ++i) kept_bytes.push_back(without_trailing_zeros(input, k.segments[i]));
  std::vector<ZeroRun> left_out;
  if (inner_zeros == InnerZeros::kLeftOut) left_out = zero_runs_to_leave_out(input, kept_bytes);
  std::vector<Placement> placements;
  std::vector<uint64_t> code;  // per placement
  uint64_t at = headers_size(input, left_out.size());
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t kept = kept_bytes[i];
    Placement m{s.paddr, s.offset, s.filesz, {}};
    uint64_t skip = 0;
    auto add_piece = [&](uint64_t file_end, uint64_t memory_end) {
      // Keep p_offset congruent to p_vaddr modulo the page size, as ELF loaders expect.
      uint64_t offset = align_up(at, 4096) + ((s.vaddr + skip) & 0xFFF);
      m.pieces.push_back({skip, offset, file_end - skip, memory_end - skip});
      at = offset + (file_end - skip);
    };
    for (const ZeroRun& run : left_out) {
      if (run.segment != i) continue;
      add_piece(run.begin, run.begin);
      m.pieces.back().memsz = run.end - m.pieces.back().skip;
      skip = run.end;
    }
    add_piece(kept, s.memsz);
    placements.push_back(std::move(m));
    code.push_back(std::min(leading_code(input, s), kept));
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

PayloadElf layout_mirrored(const KernelInput& input, uint64_t first_offset, HighestTail highest_tail) {
  const KernelHeaders& k = input.kernel;
  // The segment highest in memory ends the file: its trailing zeros (the kernel's bss, megabytes)
  // may be left to the stub. Every other one is followed by the next one's bytes, so
  // its zeros stay in the file anyway, and stay stored.
  uint32_t highest = 0;
  for (uint32_t i = 1; i < k.segment_count; ++i)
    if (k.segments[i].paddr > k.segments[highest].paddr) highest = i;
  std::vector<Placement> placements;
  uint64_t end = first_offset;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t offset = first_offset + (s.paddr - k.physical.begin);
    uint64_t kept =
        i == highest && highest_tail == HighestTail::kLeftToStub ? without_trailing_zeros(input, s) : s.memsz;
    placements.push_back({s.paddr, s.offset, s.filesz, {{0, offset, kept, s.memsz}}});
    end = std::max(end, offset + kept);
  }
  PayloadElf out = rewrite(input, placements, end);
  out.regions.push_back(Range{0, end});
  return out;
}

}  // namespace kpack
