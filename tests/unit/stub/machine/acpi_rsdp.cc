#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "formats/uefi.h"
#include "stub/machine/acpi_rsdp.h"
#include "tests/support/simulated_memory.h"

using namespace kpack;
using kpack::test::SimulatedMemory;

namespace {

// An RSDP of `revision` with both checksums right, unless `break_checksum`.
std::vector<uint8_t> rsdp(uint8_t revision, bool break_checksum = false) {
  std::vector<uint8_t> bytes(36, 0);
  std::memcpy(bytes.data(), "RSD PTR ", 8);
  bytes[15] = revision;
  bytes[16] = 0x00;  // RSDT at 0x7FE0000
  bytes[18] = 0xFE;
  bytes[19] = 0x07;
  bytes[20] = 36;  // length
  uint8_t sum = 0;
  for (int i = 0; i < 20; ++i) sum = static_cast<uint8_t>(sum + bytes[i]);
  bytes[8] = static_cast<uint8_t>(-sum);
  sum = 0;
  for (int i = 0; i < 36; ++i) sum = static_cast<uint8_t>(sum + bytes[i]);
  bytes[32] = static_cast<uint8_t>(-sum);
  if (break_checksum) bytes[9] ^= 1;
  return bytes;
}

// The first MiB, zeroed (the simulated canary would read as an EBDA pointer).
SimulatedMemory low_memory() {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  return memory;
}

}  // namespace

TEST_CASE("find_bios_rsdp finds the table in the BIOS area on a 16-byte boundary") {
  SimulatedMemory memory = low_memory();
  memory.load(0xF59D0, rsdp(0));
  CHECK(find_bios_rsdp(memory) == 0xF59D0);
}

TEST_CASE("find_bios_rsdp looks in the EBDA's first KiB first") {
  SimulatedMemory memory = low_memory();
  memory.load(kEbdaSegmentPointer, {0xC0, 0x9F});  // EBDA at 0x9FC00
  memory.load(0x9FC10, rsdp(2));
  memory.load(0xE0000, rsdp(2));
  CHECK(find_bios_rsdp(memory) == 0x9FC10);
}

TEST_CASE("find_bios_rsdp skips bad checksums, off-grid copies and an EBDA pointer into the IVT") {
  SimulatedMemory memory = low_memory();
  memory.load(kEbdaSegmentPointer, {0x20, 0x00});  // 0x200: interrupt table, not an EBDA
  memory.load(0x210, rsdp(0));
  memory.load(0xE0000, rsdp(0, /*break_checksum=*/true));
  memory.load(0xE0108, rsdp(0));  // not on a 16-byte boundary
  std::vector<uint8_t> v2 = rsdp(2);
  v2[32] ^= 1;  // extended checksum wrong: a revision-2 table must pass both
  memory.load(0xE0200, v2);
  CHECK(find_bios_rsdp(memory) == 0);
  memory.load(0xFFFD0, rsdp(2));
  CHECK(find_bios_rsdp(memory) == 0xFFFD0);
}

namespace {

// OVMF's layout in small: the system table, then its configuration table (an unrelated entry, the
// ACPI 1.0 entry, then the ACPI 2.0 one), efi_info naming the system table.
struct EfiFirmware {
  static constexpr uint64_t kSystab = 0x7F00000, kConfig = 0x7F01000;
  SimulatedMemory memory{0x7F00000, 0x10000};
  boot::EfiInfo info{};

  EfiFirmware() {
    memory.load(kSystab, std::vector<uint8_t>(0x10000, 0));
    info.efi_loader_signature = boot::kEfiLoaderSignature64;
    info.efi_systab = kSystab;
    efi::SystemTable table{};
    table.header.signature = efi::kSystemTableSignature;
    table.number_of_table_entries = 3;
    table.configuration_table = reinterpret_cast<efi::ConfigurationTable*>(kConfig);
    std::memcpy(memory.at(kSystab), &table, sizeof(table));
    put_entry(0, {0xEB9D2D31, 0x2D88, 0x11D3, {0x9A, 0x16, 0x00, 0x90, 0x27, 0x3F, 0xC1, 0x4D}},
              0x7E00000);  // SMBIOS_TABLE_GUID
    put_entry(1, efi::kAcpi10Table, 0xF0010);
    put_entry(2, efi::kAcpi20Table, 0x7FB7E014);
  }
  void put_entry(int index, const efi::Guid& guid, uint64_t table) {
    efi::ConfigurationTable entry{guid, reinterpret_cast<void*>(table)};
    std::memcpy(memory.at(kConfig + index * sizeof(entry)), &entry, sizeof(entry));
  }
};

}  // namespace

TEST_CASE("under EFI the RSDP is the configuration table's ACPI 2.0 entry, then its 1.0 one") {
  EfiFirmware firmware;
  CHECK(find_efi_rsdp(firmware.info, firmware.memory) == 0x7FB7E014);
  // Without a 2.0 entry the 1.0 one, as the stock decompressor falls back.
  firmware.memory.at(EfiFirmware::kSystab + 104)[0] = 2;
  CHECK(find_efi_rsdp(firmware.info, firmware.memory) == 0xF0010);
  firmware.memory.at(EfiFirmware::kSystab + 104)[0] = 1;
  CHECK(find_efi_rsdp(firmware.info, firmware.memory) == 0);
}

TEST_CASE("an efi_info without a readable 64-bit system table names no RSDP, and nothing faults") {
  EfiFirmware firmware;
  boot::EfiInfo info = firmware.info;
  info.efi_loader_signature = 0x32334C45;  // "EL32": a 32-bit firmware's pointers
  CHECK(find_efi_rsdp(info, firmware.memory) == 0);
  info = firmware.info;
  info.efi_systab_hi = 0xFFFFFFFF;  // a kexec'd kernel's virtual systab
  CHECK(find_efi_rsdp(info, firmware.memory) == 0);
  info = firmware.info;
  info.efi_systab = EfiFirmware::kSystab + 0x100;  // no "IBI SYST" there
  CHECK(find_efi_rsdp(info, firmware.memory) == 0);
  // A configuration table pointer past memory is refused by PhysicalMemory, not read.
  efi::SystemTable table{};
  std::memcpy(&table, firmware.memory.at(EfiFirmware::kSystab), sizeof(table));
  table.configuration_table = reinterpret_cast<efi::ConfigurationTable*>(0x7F0FFF0);
  std::memcpy(firmware.memory.at(EfiFirmware::kSystab), &table, sizeof(table));
  CHECK(find_efi_rsdp(firmware.info, firmware.memory) == 0);
}
