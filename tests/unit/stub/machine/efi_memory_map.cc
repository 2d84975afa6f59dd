// The EFI memory map as e820 (stub/machine/efi_memory_map.h), on a map written like the one OVMF
// hands a q35 guest with 512 MiB: 48-byte descriptors, every memory type Linux tells apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/support/e820_table.h"
#include "stub/machine/efi_memory_map.h"

using namespace kpack;

namespace {

constexpr uint64_t kOvmfDescriptorSize = 48;

struct Descriptor {
  uint32_t type;
  uint64_t start, pages, attribute;
};

// The descriptors at OVMF's stride; the 8 bytes past each descriptor hold junk a walk by
// sizeof(MemoryDescriptor) would read as the next one's type and start.
std::vector<uint8_t> map_of(const std::vector<Descriptor>& descriptors, uint64_t stride = kOvmfDescriptorSize) {
  std::vector<uint8_t> bytes(descriptors.size() * stride, 0xAA);
  for (size_t i = 0; i < descriptors.size(); ++i) {
    efi::MemoryDescriptor d{descriptors[i].type,     0, descriptors[i].start, 0, descriptors[i].pages,
                            descriptors[i].attribute};
    // A stride shorter than a descriptor (a broken firmware's) keeps what fits.
    std::memcpy(bytes.data() + i * stride, &d, std::min<uint64_t>(stride, sizeof(d)));
  }
  return bytes;
}

constexpr uint64_t kRuntime = 1ull << 63;   // EFI_MEMORY_RUNTIME
constexpr uint64_t kWriteBack = 1ull << 3;  // EFI_MEMORY_WB
const std::vector<Descriptor> kOvmfMap = {
    {efi::kBootServicesCode, 0x0, 0x1, kWriteBack},
    {efi::kConventionalMemory, 0x1000, 0x9F, kWriteBack},
    {efi::kConventionalMemory, 0x100000, 0x700, kWriteBack},  // after the legacy hole
    {efi::kAcpiMemoryNvs, 0x800000, 0x8, kWriteBack},
    {efi::kConventionalMemory, 0x808000, 0x3, kWriteBack},
    {efi::kAcpiMemoryNvs, 0x80B000, 0x1, kWriteBack},
    {efi::kConventionalMemory, 0x80C000, 0x4, kWriteBack},
    {efi::kAcpiMemoryNvs, 0x810000, 0xF0, kWriteBack},
    {efi::kLoaderData, 0x900000, 0x100, kWriteBack},
    {efi::kLoaderCode, 0xA00000, 0x80, kWriteBack},
    {efi::kConventionalMemory, 0xA80000, 0x1000, kWriteBack},
    {efi::kBootServicesData, 0x1A80000, 0x20, kWriteBack | efi::kMemorySpecificPurpose},
    {efi::kRuntimeServicesCode, 0x1AA0000, 0x8, kWriteBack | kRuntime},
    {efi::kRuntimeServicesData, 0x1AA8000, 0x8, kWriteBack | kRuntime},
    {efi::kAcpiReclaimMemory, 0x1AB0000, 0x5, kWriteBack},
    {efi::kReservedMemory, 0x1AB5000, 0xB, kWriteBack},
    {efi::kConventionalMemory, 0x1AC0000, 0x1E540, kWriteBack},
    {efi::kMemoryMappedIo, 0xB0000000, 0x10000, kRuntime},  // PCIe ECAM
    {efi::kReservedMemory, 0xFEFFC000, 0x4, kWriteBack},
    {efi::kMemoryMappedIo, 0xFFC00000, 0x400, kRuntime},  // the flash
    {efi::kPersistentMemory, 0x100000000, 0x40000, kWriteBack},
    {efi::kUnusableMemory, 0x140000000, 0x10, kWriteBack},
    {efi::kUnacceptedMemory, 0x140010000, 0x100, kWriteBack},
};

using Entry = test::E820Row;

std::vector<Entry> table_of(const boot::BootParams& params) { return test::e820_rows(params); }

uint32_t convert(const std::vector<uint8_t>& bytes, E820View view, boot::BootParams* params,
                 boot::E820Entry* extended = nullptr, uint32_t capacity = 0, uint64_t stride = kOvmfDescriptorSize) {
  return efi_memory_map_to_e820(EfiMemoryMapView{bytes.data(), bytes.size(), stride}, view, params, extended, capacity);
}

}  // namespace

TEST_CASE("an OVMF map for the kernel: Linux's types, neighbours of one type merged") {
  auto params = std::make_unique<boot::BootParams>();
  CHECK(convert(map_of(kOvmfMap), E820View::kHandover, params.get()) == 0);
  CHECK(table_of(*params) ==
        std::vector<Entry>{
            {0x0, 0xA0000, boot::kE820Ram},  // boot services code + conventional
            {0x100000, 0x700000, boot::kE820Ram},
            {0x800000, 0x8000, boot::kE820Nvs},
            {0x808000, 0x3000, boot::kE820Ram},
            {0x80B000, 0x1000, boot::kE820Nvs},
            {0x80C000, 0x4000, boot::kE820Ram},
            {0x810000, 0xF0000, boot::kE820Nvs},
            {0x900000, 0x1180000, boot::kE820Ram},          // loader data, loader code, conventional
            {0x1A80000, 0x20000, boot::kE820SoftReserved},  // EFI_MEMORY_SP
            {0x1AA0000, 0x10000, boot::kE820Reserved},      // runtime code + runtime data
            {0x1AB0000, 0x5000, boot::kE820Acpi},
            {0x1AB5000, 0xB000, boot::kE820Reserved},
            {0x1AC0000, 0x1E540000, boot::kE820Ram},
            {0xB0000000, 0x10000000, boot::kE820Reserved},  // MMIO
            {0xFEFFC000, 0x4000, boot::kE820Reserved},
            {0xFFC00000, 0x400000, boot::kE820Reserved},  // MMIO
            {0x100000000, 0x40000000, boot::kE820Pmem},
            {0x140000000, 0x10000, boot::kE820Unusable},
            {0x140010000, 0x100000, boot::kE820Reserved},  // unaccepted, for a kernel that does not accept memory
        });
}

TEST_CASE("the same map for placing the kernel: conventional memory only") {
  auto params = std::make_unique<boot::BootParams>();
  CHECK(convert(map_of(kOvmfMap), E820View::kFreeOnly, params.get()) == 0);
  CHECK(table_of(*params) == std::vector<Entry>{
                                 {0x1000, 0x9F000, boot::kE820Ram},
                                 {0x100000, 0x700000, boot::kE820Ram},
                                 {0x808000, 0x3000, boot::kE820Ram},
                                 {0x80C000, 0x4000, boot::kE820Ram},
                                 {0xA80000, 0x1000000, boot::kE820Ram},
                                 {0x1AC0000, 0x1E540000, boot::kE820Ram},
                             });
  efi::MemoryDescriptor soft{efi::kConventionalMemory, 0, 0, 0, 1, efi::kMemorySpecificPurpose};
  CHECK(e820_type_of(soft, E820View::kFreeOnly) == boot::kE820Reserved);
  CHECK(e820_type_of(soft, E820View::kHandover) == boot::kE820SoftReserved);
}

TEST_CASE("descriptors are walked at the firmware's stride") {
  std::vector<Descriptor> two = {{efi::kConventionalMemory, 0x100000, 0x10, 0}, {efi::kAcpiMemoryNvs, 0x200000, 1, 0}};
  for (uint64_t stride : {40, 48, 64}) {
    auto params = std::make_unique<boot::BootParams>();
    convert(map_of(two, stride), E820View::kHandover, params.get(), nullptr, 0, stride);
    CHECK(table_of(*params) ==
          std::vector<Entry>{{0x100000, 0x10000, boot::kE820Ram}, {0x200000, 0x1000, boot::kE820Nvs}});
  }
  auto params = std::make_unique<boot::BootParams>();
  params->e820_entries = 7;
  convert(map_of(two, 32), E820View::kHandover, params.get(), nullptr, 0, 32);  // shorter than a descriptor
  CHECK(params->e820_entries == 0);
  convert({}, E820View::kHandover, params.get(), nullptr, 0, 0);
  CHECK(params->e820_entries == 0);
}

TEST_CASE("a map past 128 entries: the rest in the SETUP_E820_EXT room, then left out") {
  std::vector<Descriptor> many;
  for (uint64_t i = 0; i < 200; ++i)  // alternate types, so nothing merges
    many.push_back({i % 2 ? efi::kReservedMemory : efi::kConventionalMemory, i * 0x1000, 1, 0});
  auto bytes = map_of(many);

  auto params = std::make_unique<boot::BootParams>();
  boot::E820Entry extended[100];
  CHECK(convert(bytes, E820View::kHandover, params.get(), extended, 100) == 72);
  CHECK(params->e820_entries == 128);
  CHECK(uint64_t{params->e820_table[127].addr} == 127 * 0x1000);
  CHECK(uint32_t{params->e820_table[127].type} == boot::kE820Reserved);
  CHECK(uint64_t{extended[0].addr} == 128 * 0x1000);
  CHECK(uint32_t{extended[0].type} == boot::kE820Ram);
  CHECK(uint64_t{extended[71].addr} == 199 * 0x1000);

  auto small = std::make_unique<boot::BootParams>();
  boot::E820Entry ten[10];
  CHECK(convert(bytes, E820View::kHandover, small.get(), ten, 10) == 10);
  CHECK(small->e820_entries == 128);
  CHECK(uint64_t{ten[9].addr} == 137 * 0x1000);
  CHECK(convert(bytes, E820View::kHandover, small.get()) == 0);  // no room at all past the zero page
  CHECK(small->e820_entries == 128);
}
