// The ACPI root pointer (RSDP) on a BIOS machine, found where the ACPI specification says to look
// (5.2.5.1): the first KiB of the EBDA, then 0xE0000-0xFFFFF, on 16-byte boundaries. The stock
// decompressor stores it in boot_params.acpi_rsdp_addr; kpack's stub does too, so the kernel's
// boot_params match the stock image's (and the kernel skips its own scan).
#pragma once

#include <stdint.h>

#include "stub/engine/physical_memory.h"

namespace kpack {

inline constexpr uint64_t kEbdaSegmentPointer = 0x40E;  // in the BIOS data area
inline constexpr uint64_t kEbdaWindowSize = 1024;
inline constexpr uint64_t kBiosRsdpWindow = 0xE0000, kBiosRsdpWindowSize = 0x20000;

// The address of a valid RSDP (signature and checksums), or 0 when there is none.
uint64_t find_bios_rsdp(PhysicalMemory& memory);

}  // namespace kpack
