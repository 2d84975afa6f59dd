// The few fields of the UEFI system table a boot-protocol entry reads through efi_info.efi_systab
// (UEFI 2.10, 4.3 and 4.6): where the configuration table is, and the ACPI entries in it.
#pragma once

#include <stdint.h>

#include "formats/le.h"

namespace kpack::efi {

// The 64-bit EFI_SYSTEM_TABLE up to its configuration table pointer; the header and the protocol
// pointers before it stay opaque.
struct SystemTableHead {
  ul64 signature;  // "IBI SYST"
  uint8_t header_rest_and_protocols[96];
  ul64 number_of_table_entries;
  ul64 configuration_table;
};
static_assert(sizeof(SystemTableHead) == 120);
static_assert(__builtin_offsetof(SystemTableHead, number_of_table_entries) == 104);
static_assert(__builtin_offsetof(SystemTableHead, configuration_table) == 112);
inline constexpr uint64_t kSystemTableSignature = 0x5453595320494249;  // "IBI SYST"

// One EFI_CONFIGURATION_TABLE entry: a GUID in its in-memory byte order, and the table's address.
struct ConfigurationTableEntry {
  uint8_t vendor_guid[16];
  ul64 vendor_table;
};
static_assert(sizeof(ConfigurationTableEntry) == 24);
static_assert(__builtin_offsetof(ConfigurationTableEntry, vendor_table) == 16);

// ACPI_20_TABLE_GUID 8868e871-e4f1-11d3-bc22-0080c73c8881 and ACPI_TABLE_GUID
// eb9d2d30-2d88-11d3-9a16-0090273fc14d, as the bytes in memory.
inline constexpr uint8_t kAcpi20TableGuid[16] = {0x71, 0xE8, 0x68, 0x88, 0xF1, 0xE4, 0xD3, 0x11,
                                                 0xBC, 0x22, 0x00, 0x80, 0xC7, 0x3C, 0x88, 0x81};
inline constexpr uint8_t kAcpi10TableGuid[16] = {0x30, 0x2D, 0x9D, 0xEB, 0x88, 0x2D, 0xD3, 0x11,
                                                 0x9A, 0x16, 0x00, 0x90, 0x27, 0x3F, 0xC1, 0x4D};

}  // namespace kpack::efi
