// The kernel's relocation table (arch/x86/tools/relocs -> vmlinux.relocs), read and applied as the
// stock decompressor does to move the kernel's virtual base. Entries are u32 little-endian words,
// each the low 32 bits of the link-time virtual address of a place to patch, in lists separated
// by 0 words (entries are never 0):
//   up to 6.14:  0, 64-bit list, 0, inverse 32-bit list (per-CPU), 0, 32-bit list
//   6.15 on:     0, 64-bit list, 0, 32-bit list
// so the number of 0 words tells the format.
#pragma once

#include <stdint.h>

#include "stub/unpack/kernel_headers.h"
#include "stub/base/physical_memory.h"
#include "stub/base/status.h"

namespace kpack {

// The kernel's virtual base is __START_KERNEL_map plus its physical link address.
inline constexpr uint64_t kStartKernelMap = 0xffffffff80000000ull;
// How far the kernel's image may reach above __START_KERNEL_map with KASLR (KERNEL_IMAGE_SIZE).
inline constexpr uint64_t kKernelImageSize = 1ull << 30;

// The link-time physical address an entry names: sign-extended to the kernel's virtual address,
// then taken back to physical through __START_KERNEL_map (per-CPU places included: relocs
// writes them at their load address).
constexpr uint64_t physical_target(uint32_t entry) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(entry))) - kStartKernelMap;
}

enum class RelocationFormat : uint8_t { kWithInverse32, kWithoutInverse32 };

struct RelocationTable {
  const uint8_t* words = nullptr;
  RelocationFormat format = RelocationFormat::kWithoutInverse32;
  // Half-open ranges of word indices.
  uint64_t list64_begin = 0, list64_end = 0;
  uint64_t inverse32_begin = 0, inverse32_end = 0;
  uint64_t list32_begin = 0, list32_end = 0;

  uint64_t count64() const { return list64_end - list64_begin; }
  uint64_t count_inverse32() const { return inverse32_end - inverse32_begin; }
  uint64_t count32() const { return list32_end - list32_begin; }
  uint64_t entries() const { return count64() + count_inverse32() + count32(); }
};

// Splits `size` bytes at `bytes` into their lists; an error when the shape is not one of the two.
StubStatus parse_relocation_table(const uint8_t* bytes, uint64_t size, RelocationTable* out);

// Moves the virtual base of the kernel placed at physical `base` up by `delta` (a multiple of
// 2 MiB, the KASLR virtual offset) with the table in `size` bytes at `bytes`: 64-bit and 32-bit
// places get delta added, inverse 32-bit places get it subtracted. The table is parsed and every
// target checked to lie inside the file-backed bytes of a segment before the first is written, so
// a bad table leaves the kernel untouched. `applied` receives the parsed table.
StubStatus relocate_kernel(const uint8_t* bytes, uint64_t size, const KernelHeaders& kernel, uint64_t base,
                           uint64_t delta, PhysicalMemory& memory, RelocationTable* applied);

}  // namespace kpack
