// Lays out the payload's ELF file: a compact file split into regions, one frame each for
// compressed payloads (the headers, each segment, and any bytes between segments), stored whole for
// raw ones. A mirrored file, whose segment offsets mirror their physical addresses, is how older raw
// images stored the kernel; the stub still runs one in place (the engine's tests use it).
#pragma once

#include <cstdint>
#include <vector>

#include "packer/input/kernel_input.h"
#include "packer/input/raw_pieces.h"
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
// own PT_LOAD whose bss reaches the next one (megabytes of a Debian kernel, which a firmware reading
// the file pays for byte by byte: BENCHMARKS.md). Runs that hold a relocation target are
// kept, and the pieces stay within the stub's kMaxLoadSegments (the longest runs first).
enum class InnerZeros { kStored, kLeftOut };
inline constexpr uint64_t kMinLeftOutZeros = 64 * 1024;
PayloadElf layout_compact(const KernelInput& input, InnerZeros inner_zeros = InnerZeros::kStored);

// The lowest segment at file offset `first_offset`, every other one at the same distance from it as
// in physical memory. Every segment but the highest stores its zeros (p_filesz = p_memsz); the
// highest stores them too with HighestTail::kStored (the file then ends where the kernel does, and
// the stub zeroes nothing: kpack's in-place images, whose loaders copy the file and not the stub),
// or leaves them to the stub as bss with kLeftToStub (p_filesz shrinks to its last non-zero byte).
enum class HighestTail { kLeftToStub, kStored };
PayloadElf layout_mirrored(const KernelInput& input, uint64_t first_offset,
                           HighestTail highest_tail = HighestTail::kLeftToStub);

}  // namespace kpack
