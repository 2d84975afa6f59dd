// Unaccepted memory handed to a kernel that accepts memory itself (stub/machine/unaccepted_memory.h),
// on a map written like a TDX guest's with 12 GiB whose firmware accepted the memory below 2 GiB
// and a little above 4 GiB: unaccepted ranges that start and end inside a 2 MiB unit, one that is
// aligned, and one too small to hold a whole unit.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tests/support/e820_table.h"
#include "stub/machine/efi_memory_map.h"
#include "stub/machine/unaccepted_memory.h"

using namespace kpack;

namespace kpack {
// Found by doctest's comparisons through Range's namespace.
bool operator==(Range a, Range b) { return a.begin == b.begin && a.end == b.end; }
}  // namespace kpack

namespace {

struct Descriptor {
  uint32_t type;
  uint64_t start, pages;
};

std::vector<uint8_t> map_of(const std::vector<Descriptor>& descriptors) {
  constexpr uint64_t kStride = 48;  // OVMF's
  std::vector<uint8_t> bytes(descriptors.size() * kStride, 0xAA);
  for (size_t i = 0; i < descriptors.size(); ++i) {
    efi::MemoryDescriptor d{descriptors[i].type, 0, descriptors[i].start, 0, descriptors[i].pages, 0};
    std::memcpy(bytes.data() + i * kStride, &d, sizeof(d));
  }
  return bytes;
}

EfiMemoryMapView view_of(const std::vector<uint8_t>& bytes) { return EfiMemoryMapView{bytes.data(), bytes.size(), 48}; }

const std::vector<Descriptor> kTdxMap = {
    {efi::kConventionalMemory, 0x0, 0xA0},
    {efi::kConventionalMemory, 0x100000, 0x7EF80},
    {efi::kUnacceptedMemory, 0x7F080000, 0x100},  // 1 MiB across two units: no whole one
    {efi::kReservedMemory, 0x7F180000, 0xE80},
    {efi::kMemoryMappedIo, 0xB0000000, 0x10000},
    {efi::kConventionalMemory, 0x100000000, 0x100},
    {efi::kUnacceptedMemory, 0x100100000, 0x17FE80},  // starts and ends mid-unit
    {efi::kConventionalMemory, 0x27FF80000, 0x80},
    {efi::kUnacceptedMemory, 0x280000000, 0x80000},  // 2 GiB, aligned
};

// The table as the EFI entry allocates it: header and bitmap in one block.
struct TableBuffer {
  explicit TableBuffer(UnacceptedBitmapExtent extent) : bytes(sizeof(efi::LinuxUnacceptedMemory) + extent.bytes, 0xEE) {
    init_unaccepted_table(table(), extent);
  }
  efi::LinuxUnacceptedMemory* table() { return reinterpret_cast<efi::LinuxUnacceptedMemory*>(bytes.data()); }
  std::vector<uint8_t> bitmap() const { return {bytes.begin() + sizeof(efi::LinuxUnacceptedMemory), bytes.end()}; }
  std::vector<uint8_t> bytes;
};

using Entry = test::E820Row;

std::vector<Entry> table_of(const boot::BootParams& params) { return test::e820_rows(params); }

}  // namespace

TEST_CASE("the bitmap spans the unaccepted memory in 2 MiB units, as stock sizes it") {
  std::vector<uint8_t> map = map_of(kTdxMap);
  UnacceptedBitmapExtent extent = unaccepted_bitmap_extent(view_of(map));
  // From the unit holding 0x7F080000 to the one ending at 12 GiB: 5128 units, 641 bytes.
  CHECK(extent.phys_base == 0x7F000000);
  CHECK(extent.bytes == 641);
  TableBuffer buffer(extent);
  const efi::LinuxUnacceptedMemory& table = *buffer.table();
  CHECK(table.version == 1);
  CHECK(table.unit_size == 0x200000);
  CHECK(table.phys_base == 0x7F000000);
  CHECK(table.size == 641);
  CHECK(buffer.bitmap() == std::vector<uint8_t>(641, 0));
  // The header as the kernel reads it: u32 version, u32 unit_size, u64 phys_base, u64 size.
  CHECK(std::vector<uint8_t>(buffer.bytes.begin(), buffer.bytes.begin() + 24) ==
        std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0x7F, 0, 0, 0, 0, 0x81, 0x02, 0, 0, 0, 0, 0, 0});

  std::vector<uint8_t> accepted = map_of({{efi::kConventionalMemory, 0x100000, 0x1000}});
  CHECK(unaccepted_bitmap_extent(view_of(accepted)).bytes == 0);  // no unaccepted memory: no table
}

TEST_CASE("unaccepted memory becomes RAM in whole units with their bits set, the partial edges reserved") {
  std::vector<uint8_t> map = map_of(kTdxMap);
  TableBuffer buffer(unaccepted_bitmap_extent(view_of(map)));
  auto params = std::make_unique<boot::BootParams>();
  CHECK(efi_memory_map_to_e820(view_of(map), E820View::kHandover, params.get(), nullptr, 0, buffer.table()) == 0);
  CHECK(table_of(*params) == std::vector<Entry>{
                                 {0x0, 0xA0000, boot::kE820Ram},
                                 {0x100000, 0x7EF80000, boot::kE820Ram},
                                 {0x7F080000, 0xF80000, boot::kE820Reserved},  // no whole unit, then reserved
                                 {0xB0000000, 0x10000000, boot::kE820Reserved},
                                 {0x100000000, 0x100000, boot::kE820Ram},
                                 {0x100100000, 0x100000, boot::kE820Reserved},  // the start's part unit
                                 {0x100200000, 0x17FC00000, boot::kE820Ram},
                                 {0x27FE00000, 0x180000, boot::kE820Reserved},  // the end's part unit
                                 {0x27FF80000, 0x80080000, boot::kE820Ram},     // accepted, then the aligned range
                             });
  // Bits 1033..4102 (0x100200000..0x27FE00000) and 4104..5127 (0x280000000..12 GiB); 4103 holds the
  // reserved edge and the accepted tail, which the kernel must not accept again.
  std::vector<uint8_t> expected(641, 0);
  expected[129] = 0xFE;
  for (size_t i = 130; i < 512; ++i) expected[i] = 0xFF;
  expected[512] = 0x7F;
  for (size_t i = 513; i < 641; ++i) expected[i] = 0xFF;
  CHECK(buffer.bitmap() == expected);
}

TEST_CASE("without a table, or to place the kernel, unaccepted memory is never RAM") {
  std::vector<uint8_t> map = map_of(kTdxMap);
  auto params = std::make_unique<boot::BootParams>();
  efi_memory_map_to_e820(view_of(map), E820View::kHandover, params.get(), nullptr, 0);
  std::vector<Entry> handover = table_of(*params);
  CHECK(handover[2] == Entry{0x7F080000, 0xF80000, boot::kE820Reserved});
  CHECK(handover[5] == Entry{0x100100000, 0x17FE80000, boot::kE820Reserved});
  CHECK(handover[7] == Entry{0x280000000, 0x80000000, boot::kE820Reserved});

  TableBuffer buffer(unaccepted_bitmap_extent(view_of(map)));
  efi_memory_map_to_e820(view_of(map), E820View::kFreeOnly, params.get(), nullptr, 0, buffer.table());
  CHECK(table_of(*params) == std::vector<Entry>{
                                 {0x0, 0xA0000, boot::kE820Ram},
                                 {0x100000, 0x7EF80000, boot::kE820Ram},
                                 {0x100000000, 0x100000, boot::kE820Ram},
                                 {0x27FF80000, 0x80000, boot::kE820Ram},
                             });
  CHECK(buffer.bitmap() == std::vector<uint8_t>(641, 0));  // nothing marked for a view that hands nothing over
}

TEST_CASE("only whole units the bitmap covers are marked") {
  TableBuffer buffer(UnacceptedBitmapExtent{0x40000000, 2});  // 16 units: 1 GiB to 1 GiB + 32 MiB
  efi::LinuxUnacceptedMemory* table = buffer.table();
  // Under two units but holding a whole one: stock accepts it all now, the stub leaves that unit.
  CHECK(mark_unaccepted(table, Range{0x40100000, 0x40500000}) == Range{0x40200000, 0x40400000});
  CHECK(buffer.bitmap() == std::vector<uint8_t>{0x02, 0x00});
  // Straddling two units without holding one: nothing.
  CHECK(mark_unaccepted(table, Range{0x40500000, 0x40700000}).empty());
  // Below the bitmap's base and past its end: only the covered units.
  CHECK(mark_unaccepted(table, Range{0x3FE00000, 0x40400000}) == Range{0x40000000, 0x40400000});
  CHECK(mark_unaccepted(table, Range{0x41C00000, 0x42400000}) == Range{0x41C00000, 0x42000000});
  CHECK(buffer.bitmap() == std::vector<uint8_t>{0x03, 0xC0});
  CHECK(mark_unaccepted(table, Range{0x42000000, 0x42400000}).empty());

  // An earlier stage's table the kernel would read differently: nothing marked, all of it reserved.
  table->phys_base = 0x40100000;
  CHECK(mark_unaccepted(table, Range{0x40200000, 0x40400000}).empty());
  table->phys_base = 0x40000000;
  table->unit_size = 0x300000;
  CHECK(mark_unaccepted(table, Range{0x40000000, 0x40600000}).empty());
  table->unit_size = 0;
  CHECK(mark_unaccepted(table, Range{0x40000000, 0x40600000}).empty());
  CHECK(buffer.bitmap() == std::vector<uint8_t>{0x03, 0xC0});
}
