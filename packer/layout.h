// Lays out the payload's ELF file: a compact file split into regions, one frame each for
// compressed payloads (the headers, each segment, and any bytes between segments), stored whole for
// raw ones. A mirrored file, whose segment offsets mirror their physical addresses, is how older raw
// images stored the kernel; the stub still runs one in place (the engine's tests use it).
#pragma once

#include <cstdint>
#include <vector>

#include "packer/kernel_input.h"
#include "stub/base/range.h"

namespace kpack {

struct PayloadElf {
  std::vector<uint8_t> bytes;
  std::vector<Range> regions;  // file ranges in order, covering [0, bytes.size())
  std::vector<Range> code;     // the regions that hold machine code (xz filters them with BCJ)
  KernelHeaders kernel;        // the program headers as rewritten
};

// Segments packed one after another (page-aligned offsets), trailing zero bytes turned into bss
// (p_filesz shrinks, p_memsz stays); section headers are dropped. A read-only executable segment
// that starts with machine code (the run of SHF_EXECINSTR sections at its start: .text) is two
// regions, the code and the rest; without section headers, it is all code.
//
// With InnerZeros::kLeftOut (raw payloads), runs of at least kMinLeftOutZeros whole zero pages
// inside a segment are left out of the file too: the segment is cut there into pieces, each its
// own PT_LOAD whose bss reaches the next one (3.7 MB of Debian's 6.1, which a firmware reading the
// file pays for at about 4.5 guest instructions a byte). Runs that hold a relocation target are
// kept, and the pieces stay within the stub's kMaxLoadSegments (the longest runs first).
enum class InnerZeros { kStored, kLeftOut };
inline constexpr uint64_t kMinLeftOutZeros = 64 * 1024;
PayloadElf layout_compact(const KernelInput& input, InnerZeros inner_zeros = InnerZeros::kStored);

// The inverse for `kpack extract`: a raw payload's ELF with every segment's pieces (InnerZeros::
// kLeftOut) joined again into one PT_LOAD, the zeros between them stored, so the vmlinux read back
// has the program headers it was packed from. Pieces are the PT_LOADs that continue the one before
// them in memory (physical and virtual), with its flags and a 4 KiB p_align; an ELF without such
// pieces comes back unchanged, and so does one whose joined file would pass `max_size` bytes.
std::vector<uint8_t> join_left_out_zeros(std::vector<uint8_t> elf, uint64_t max_size);

// Whether segment `i` of a raw payload's headers is a piece continuing the one before it, and
// the zero bytes left out between pieces (`runs` gets how many places).
bool continues_piece(const KernelHeaders& kernel, uint32_t i);
uint64_t left_out_zeros(const KernelHeaders& kernel, uint32_t* runs);

// The lowest segment at file offset `first_offset`, every other one at the same distance from it as
// in physical memory. Every segment but the highest stores its zeros (p_filesz = p_memsz); the
// highest stores them too with HighestTail::kStored (the file then ends where the kernel does, and
// the stub zeroes nothing: kpack's in-place images, whose loaders copy the file and not the stub),
// or leaves them to the stub as bss with kLeftToStub (p_filesz shrinks to its last non-zero byte).
enum class HighestTail { kLeftToStub, kStored };
PayloadElf layout_mirrored(const KernelInput& input, uint64_t first_offset,
                           HighestTail highest_tail = HighestTail::kLeftToStub);

// Whether every segment lies as far from the first in the file as in physical memory (what
// layout_mirrored writes; a kernel of one segment always does).
bool mirrors_physical(const KernelHeaders& kernel);

}  // namespace kpack
