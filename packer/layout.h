// Lays out the payload's ELF file: a compact file split into regions, one frame each for
// compressed payloads (the headers, each segment, and any bytes between segments), stored whole for
// raw ones. A mirrored file, whose segment offsets mirror their physical addresses, is how older raw
// images stored the kernel; the stub still runs one in place (the engine's tests use it).
#pragma once

#include <cstdint>
#include <vector>

#include "packer/kernel_input.h"
#include "stub/engine/range.h"

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
PayloadElf layout_compact(const KernelInput& input);

// The lowest segment at file offset `first_offset`, every other one at the same distance from it as
// in physical memory. The highest segment's trailing zero bytes become bss (p_filesz shrinks, the
// file ends with its last non-zero byte); the others store theirs as zeros (p_filesz = p_memsz).
PayloadElf layout_mirrored(const KernelInput& input, uint64_t first_offset);

}  // namespace kpack
