#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "stub/engine/acpi_rsdp.h"
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
