// The EFI configuration table: the (GUID, table) pairs the firmware's system table points at
// (UEFI 2.10, 4.6). One lookup for the EFI entry, which reads the firmware's own array under boot
// services (stub/efi/), and for find_efi_rsdp (acpi_rsdp.cc), which reads the array efi_info names.
#pragma once

#include <stdint.h>

#include "formats/uefi.h"

namespace kpack {

// The table of `guid` among the `count` entries at `entries`, or 0 when none names it.
uint64_t configuration_table(const efi::ConfigurationTable* entries, uint64_t count, const efi::Guid& guid);

}  // namespace kpack
