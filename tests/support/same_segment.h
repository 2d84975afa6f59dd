// Whether a segment read back from a packed image loads the same memory as the original: the same
// addresses and size, and the same bytes once each is padded with zeros to p_memsz (compressed
// layouts turn trailing zeros into bss, the raw layout stores bss as zeros).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stub/unpack/kernel_headers.h"

namespace kpack::test {

inline bool same_segment(const std::vector<uint8_t>& original_elf, const LoadSegment& original,
                         const std::vector<uint8_t>& packed_elf, const LoadSegment& packed) {
  if (packed.paddr != original.paddr || packed.vaddr != original.vaddr || packed.memsz != original.memsz) return false;
  auto a = original_elf.begin() + original.offset;
  auto b = packed_elf.begin() + packed.offset;
  uint64_t common = std::min(original.filesz, packed.filesz);
  auto zero = [](uint8_t byte) { return byte == 0; };
  return std::equal(a, a + common, b) && std::all_of(a + common, a + original.filesz, zero) &&
         std::all_of(b + common, b + packed.filesz, zero);
}

}  // namespace kpack::test
