// The kernel's relocation table (formats/relocation_table.h: arch/x86/tools/relocs ->
// vmlinux.relocs) read in place and applied as the stock decompressor does, to move the kernel's
// virtual base.
#pragma once

#include <stdint.h>

#include "formats/relocation_table.h"
#include "stub/unpack/kernel_headers.h"
#include "stub/base/physical_memory.h"
#include "stub/base/status.h"

namespace kpack {

// Where each list of a table lies, in words from its start: the table itself stays where it is.
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
