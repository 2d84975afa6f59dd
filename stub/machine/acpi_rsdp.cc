#include "stub/machine/acpi_rsdp.h"

#include "formats/le.h"
#include "formats/uefi.h"
#include "stub/machine/efi_configuration_table.h"

namespace kpack {
namespace {

constexpr uint64_t kRsdpV1Length = 20, kRsdpV2Length = 36;
constexpr uint64_t kRevisionOffset = 15;

bool sums_to_zero(const uint8_t* bytes, uint64_t length) {
  uint8_t sum = 0;
  for (uint64_t i = 0; i < length; ++i) sum = static_cast<uint8_t>(sum + bytes[i]);
  return sum == 0;
}

// ACPI 1.0 checksums the first 20 bytes; 2.0 and later add a checksum over all 36.
bool is_rsdp(const uint8_t* at) {
  static constexpr char kSignature[] = "RSD PTR ";
  for (int i = 0; i < 8; ++i)
    if (at[i] != static_cast<uint8_t>(kSignature[i])) return false;
  if (!sums_to_zero(at, kRsdpV1Length)) return false;
  return at[kRevisionOffset] < 2 || sums_to_zero(at, kRsdpV2Length);
}

uint64_t scan(PhysicalMemory& memory, uint64_t start, uint64_t size) {
  const uint8_t* window = memory.readable(start, size);
  if (!window) return 0;
  for (uint64_t offset = 0; offset + kRsdpV2Length <= size; offset += 16)
    if (is_rsdp(window + offset)) return start + offset;
  return 0;
}

}  // namespace

uint64_t find_efi_rsdp(const boot::EfiInfo& info, PhysicalMemory& memory) {
  if (info.efi_loader_signature != boot::kEfiLoaderSignature64) return 0;
  uint64_t systab = info.efi_systab | (uint64_t{info.efi_systab_hi} << 32);
  const uint8_t* table_bytes = systab ? memory.readable(systab, sizeof(efi::SystemTable)) : nullptr;
  if (!table_bytes) return 0;
  const auto& table = *reinterpret_cast<const efi::SystemTable*>(table_bytes);
  if (table.header.signature != efi::kSystemTableSignature) return 0;
  // A count no firmware has: more would only be a garbled table (and an overflowing size).
  uint64_t count = table.number_of_table_entries;
  if (count > 1024) return 0;
  const uint8_t* entries =
      memory.readable(reinterpret_cast<uint64_t>(table.configuration_table), count * sizeof(efi::ConfigurationTable));
  if (!entries) return 0;
  const auto* config = reinterpret_cast<const efi::ConfigurationTable*>(entries);
  if (uint64_t rsdp = configuration_table(config, count, efi::kAcpi20Table)) return rsdp;
  return configuration_table(config, count, efi::kAcpi10Table);
}

uint64_t find_bios_rsdp(PhysicalMemory& memory) {
  if (const uint8_t* pointer = memory.readable(kEbdaSegmentPointer, 2)) {
    uint64_t ebda = uint64_t{load_le<uint16_t>(pointer)} << 4;
    // Below 0x400 is the interrupt table: a BIOS without an EBDA leaves the pointer at 0.
    if (ebda > 0x400) {
      if (uint64_t found = scan(memory, ebda, kEbdaWindowSize)) return found;
    }
  }
  return scan(memory, kBiosRsdpWindow, kBiosRsdpWindowSize);
}

}  // namespace kpack
