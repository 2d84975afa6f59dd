// Memory a confidential VM's firmware left unaccepted (EfiUnacceptedMemoryType, TDX and SEV-SNP),
// handed to a kernel that accepts memory itself as the Linux EFI stub hands it
// (drivers/firmware/efi/libstub/unaccepted_memory.c): a table with one bit per 2 MiB unit, set
// while the unit is unaccepted, and those units as e820 RAM the kernel accepts when it first
// allocates them. Pure, so the host tests it on recorded maps; the EFI entry allocates and
// installs the table (stub/efi/efi_unaccepted_memory.cc).
#pragma once

#include <stdint.h>

#include "formats/uefi.h"
#include "stub/machine/efi_memory_map.h"
#include "stub/base/range.h"

namespace kpack {

// The bitmap's extent as stock sizes it (allocate_unaccepted_bitmap): from the unit holding the
// lowest unaccepted byte to the unit holding the highest, one bit each. No bytes: the map has no
// unaccepted memory, and the kernel gets no table.
struct UnacceptedBitmapExtent {
  uint64_t phys_base = 0;
  uint64_t bytes = 0;
};
UnacceptedBitmapExtent unaccepted_bitmap_extent(const EfiMemoryMapView& map);

// The table's header for `extent`, its bitmap cleared (room for extent.bytes after the header).
void init_unaccepted_table(efi::LinuxUnacceptedMemory* table, UnacceptedBitmapExtent extent);

// Records one unaccepted range: the whole units inside it that the bitmap covers get their bits
// set and are returned, for the kernel to have as RAM. Stock accepts the rest on the spot (a part
// unit at either edge, a range under two units, what lies outside the bitmap); the stub has no
// TDX or SNP page acceptance, so the caller keeps that rest out of RAM. Returns an empty range when
// no whole unit is left, or for a table (an earlier stage's) whose unit or base it cannot use.
Range mark_unaccepted(efi::LinuxUnacceptedMemory* table, Range unaccepted);

}  // namespace kpack
