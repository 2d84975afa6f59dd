// The ACPI root pointer (RSDP) on a BIOS machine, found where the ACPI specification says to look
// (5.2.5.1): the first KiB of the EBDA, then 0xE0000-0xFFFFF, on 16-byte boundaries. The stock
// decompressor stores it in boot_params.acpi_rsdp_addr; kpack's stub does too, so the kernel's
// boot_params match the stock image's (and the kernel skips its own scan). On a UEFI machine entered
// through the boot protocol (GRUB's EFI `linux`), the firmware's configuration table names it.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "stub/base/physical_memory.h"

namespace kpack {

inline constexpr uint64_t kEbdaSegmentPointer = 0x40E;  // in the BIOS data area
inline constexpr uint64_t kEbdaWindowSize = 1024;
inline constexpr uint64_t kBiosRsdpWindow = 0xE0000, kBiosRsdpWindowSize = 0x20000;

// The address of a valid RSDP (signature and checksums), or 0 when there is none.
uint64_t find_bios_rsdp(PhysicalMemory& memory);

// The RSDP the EFI configuration table names, the ACPI 2.0 entry before the 1.0 one, as the stock
// decompressor takes it (efi_get_rsdp_addr); 0 when efi_info names no 64-bit system table, or the
// table cannot be read (a kexec'd kernel's systab points at virtual addresses).
uint64_t find_efi_rsdp(const boot::EfiInfo& info, PhysicalMemory& memory);

}  // namespace kpack
