#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/efi_memory.h"
#include "stub/machine/boot_environment.h"
#include "stub/unpack/kaslr.h"
#include "tests/support/simulated_memory.h"
#include "formats/boot_params.h"

using namespace kpack;

namespace {

struct Machine {
  std::unique_ptr<test::SimulatedMemory> memory = std::make_unique<test::SimulatedMemory>(0, 64 << 20);
  boot::BootParams params{};

  Machine() {
    add_e820(0, 0x9FC00, boot::kE820Ram);
    add_e820(0x9FC00, 0x400, 2);
    add_e820(0xF0000, 0x10000, 2);
    add_e820(0x100000, (64 << 20) - 0x100000, boot::kE820Ram);
  }
  void add_e820(uint64_t addr, uint64_t size, uint32_t type) {
    boot::E820Entry& e = params.e820_table[params.e820_entries++];
    e.addr = addr;
    e.size = size;
    e.type = type;
  }
  void put_string(uint64_t addr, const char* text) { std::memcpy(memory->at(addr), text, std::strlen(text) + 1); }
};

bool is_free(const BootEnvironment& env, uint64_t begin, uint64_t end) { return env.free.contains({begin, end}); }

}  // namespace

TEST_CASE("the environment is usable RAM above 1 MiB minus everything the loader handed over") {
  Machine m;
  m.params.hdr.cmd_line_ptr = 0x20000;
  m.params.hdr.cmdline_size = 2047;
  m.put_string(0x20000, "console=ttyS0 kpack.debug");
  m.params.hdr.ramdisk_image = 0x3000000;
  m.params.hdr.ramdisk_size = 0x123456;
  // A two-node setup_data chain right after a pretend image, as QEMU lays it out.
  boot::SetupData first{};
  first.next = 0x2100000;
  first.len = 100;
  boot::SetupData second{};
  second.len = 8;
  std::memcpy(m.memory->at(0x2000000), &first, sizeof(first));
  std::memcpy(m.memory->at(0x2100000), &second, sizeof(second));
  m.params.hdr.setup_data = 0x2000000;

  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env).ok());
  CHECK(env.command_line.begin == 0x20000);
  CHECK(env.command_line.size() == std::strlen("console=ttyS0 kpack.debug") + 1);
  CHECK(env.initrd.begin == 0x3000000);
  CHECK(env.initrd.end == 0x3123456);
  CHECK(env.setup_data_nodes == 2);
  CHECK(is_free(env, 0x100000, 0x2000000));
  CHECK_FALSE(is_free(env, 0x2000000, 0x2000001));
  CHECK(is_free(env, 0x2000000 + 16 + 100, 0x2100000));
  CHECK_FALSE(is_free(env, 0x2100000 + 16 + 7, 0x2100000 + 16 + 8));
  CHECK_FALSE(is_free(env, 0x3123455, 0x3123456));
  CHECK(is_free(env, 0x3124000, 64 << 20));
  CHECK_FALSE(is_free(env, 0xFF000, 0x100000));  // below 1 MiB is never used
  CHECK(env.free.at(0).begin == 0x100000);
  CHECK(env.free.at(env.free.count() - 1).end == 64 << 20);
}

TEST_CASE("reserved e820 entries inside RAM entries are excluded; RAM above 4 GiB counts up to MAXMEM") {
  Machine m;
  m.add_e820(0x800000, 0x1000, 2);
  m.add_e820(0x100000000ull, 0x40000000, boot::kE820Ram);
  m.add_e820(kMaxPhysicalAddress - 0x200000, 0x400000, boot::kE820Ram);  // straddles 64 TiB
  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env).ok());
  CHECK_FALSE(is_free(env, 0x800000, 0x801000));
  CHECK(is_free(env, 0x801000, 0x900000));
  CHECK(is_free(env, 0x100000000ull, 0x140000000ull));
  CHECK(env.free.at(env.free.count() - 1).begin == kMaxPhysicalAddress - 0x200000);
  CHECK(env.free.at(env.free.count() - 1).end == kMaxPhysicalAddress);
}

TEST_CASE("an initrd above 4 GiB (ext_ramdisk_* high halves) stays out of free memory") {
  Machine m;
  m.add_e820(0x100000000ull, 0x100000000ull, boot::kE820Ram);
  m.params.hdr.ramdisk_image = 0x20000000;
  m.params.ext_ramdisk_image = 1;
  m.params.hdr.ramdisk_size = 0x800000;
  m.params.ext_ramdisk_size = 0;
  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env).ok());
  CHECK(env.initrd.begin == 0x120000000ull);
  CHECK(env.initrd.end == 0x120800000ull);
  CHECK_FALSE(is_free(env, 0x120000000ull, 0x120000001ull));
  CHECK_FALSE(is_free(env, 0x1207FFFFFull, 0x120800000ull));
  CHECK(is_free(env, 0x120800000ull, 0x200000000ull));
  CHECK(is_free(env, 0x100000000ull, 0x120000000ull));
}

TEST_CASE("setup_data: SETUP_INDIRECT targets stay out of free memory, the RNG seed is found") {
  Machine m;
  boot::SetupData indirect{};
  indirect.next = 0x2100000;
  indirect.type = boot::kSetupIndirect;
  indirect.len = sizeof(boot::SetupIndirect);
  boot::SetupIndirect body{};
  body.type = 1;
  body.addr = 0x2800000;
  body.len = 0x5000;
  std::memcpy(m.memory->at(0x2000000), &indirect, sizeof(indirect));
  std::memcpy(m.memory->at(0x2000000 + sizeof(indirect)), &body, sizeof(body));
  boot::SetupData seed{};
  seed.type = boot::kSetupRngSeed;
  seed.len = 32;
  std::memcpy(m.memory->at(0x2100000), &seed, sizeof(seed));
  m.params.hdr.setup_data = 0x2000000;

  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env).ok());
  CHECK(env.setup_data_nodes == 2);
  CHECK_FALSE(is_free(env, 0x2800000, 0x2800001));
  CHECK_FALSE(is_free(env, 0x2804fff, 0x2805000));
  CHECK(is_free(env, 0x2805000, 0x2806000));
  CHECK(env.rng_seed.begin == 0x2100000 + sizeof(boot::SetupData));
  CHECK(env.rng_seed.size() == 32);
  CHECK_FALSE(is_free(env, 0x2100000, 0x2100000 + 16 + 32));
}

TEST_CASE("a broken hand-over is an error with its own message") {
  auto expect = [](Machine& m, const char* message) {
    BootEnvironment env;
    StubStatus status = read_boot_environment(m.params, 0x90000, *m.memory, &env);
    REQUIRE_FALSE(status.ok());
    CHECK(std::string(status.message) == message);
  };
  {
    Machine m;
    m.params.e820_entries = 0;
    expect(m, "the loader passed no e820 memory map");
  }
  {
    Machine m;
    m.params.e820_entries = 200;
    expect(m, "e820 map has too many entries");
  }
  {
    Machine m;
    m.params.hdr.setup_data = 0x200000000ull;
    expect(m, "setup_data is not in memory");
  }
  {
    Machine m;
    m.params.hdr.setup_data = 0x8000000;
    expect(m, "setup_data is not in memory");
  }
  {
    Machine m;  // a node pointing at itself
    boot::SetupData loop{};
    loop.next = 0x2000000;
    std::memcpy(m.memory->at(0x2000000), &loop, sizeof(loop));
    m.params.hdr.setup_data = 0x2000000;
    expect(m, "setup_data list too long or circular");
  }
  {
    Machine m;
    m.params.hdr.ramdisk_image = 0xFFFFF000;
    m.params.ext_ramdisk_image = 0xFFFFFFFF;
    m.params.hdr.ramdisk_size = 0x2000;
    expect(m, "initrd range wraps around");
  }
  {
    Machine m;
    m.params.hdr.cmd_line_ptr = 0x3FFFFFF;
    m.params.hdr.cmdline_size = 100;
    *m.memory->at(0x3FFFFFF) = 'x';
    expect(m, "command line runs out of memory");
  }
}

namespace {

// GRUB's EFI `linux` on OVMF with 64 MiB: e820 (GRUB's, from the firmware's map) calls everything
// from 1 MiB up RAM, but the firmware's map, at OVMF's 48-byte stride, keeps ACPI NVS, GRUB's own
// loader data, boot services, a soft-reserved range and runtime data out of conventional memory.
struct OvmfMachine : Machine {
  static constexpr uint64_t kMap = 0x1F00000, kStride = 48;
  std::vector<uint8_t> map;

  OvmfMachine() {
    descriptor(efi::kConventionalMemory, 0x0, 0xA0);
    descriptor(efi::kConventionalMemory, 0x100000, 0x700);
    descriptor(efi::kAcpiMemoryNvs, 0x800000, 0x8);
    descriptor(efi::kConventionalMemory, 0x808000, 0x7F8);
    descriptor(efi::kLoaderData, 0x1000000, 0x1000);  // GRUB, the image, this map
    descriptor(efi::kConventionalMemory, 0x2000000, 0x1800);
    descriptor(efi::kBootServicesData, 0x3800000, 0x400);
    descriptor(efi::kConventionalMemory, 0x3C00000, 0x100, efi::kMemorySpecificPurpose);
    descriptor(efi::kConventionalMemory, 0x3D00000, 0x200);
    descriptor(efi::kRuntimeServicesData, 0x3F00000, 0x80);
    descriptor(efi::kBootServicesCode, 0x3F80000, 0x80);
    store();
  }
  void descriptor(uint32_t type, uint64_t start, uint64_t pages, uint64_t attribute = 0) {
    efi::MemoryDescriptor d{};
    d.type = type, d.physical_start = start, d.number_of_pages = pages, d.attribute = attribute | 0xF;
    map.resize(map.size() + kStride, 0xEE);  // the stride's tail is not a descriptor's
    std::memcpy(&map[map.size() - kStride], &d, sizeof(d));
  }
  void store() {
    std::memcpy(memory->at(kMap), map.data(), map.size());
    params.efi_info.efi_loader_signature = boot::kEfiLoaderSignature64;
    params.efi_info.efi_memmap = kMap;
    params.efi_info.efi_memmap_size = static_cast<uint32_t>(map.size());
    params.efi_info.efi_memdesc_size = kStride;
    params.efi_info.efi_memdesc_version = 1;
  }
  BootEnvironment read(RamSource source = RamSource::kEfiMapWhenPresent) {
    BootEnvironment env;
    StubStatus status = read_boot_environment(params, 0x90000, *memory, &env, source);
    REQUIRE(status.ok());
    return env;
  }
};

std::vector<Range> ranges_of(const FreeMemory& free) {
  std::vector<Range> out;
  for (uint32_t i = 0; i < free.count(); ++i) out.push_back(free.at(i));
  return out;
}

}  // namespace

namespace kpack {
// Found by std::vector's comparison through argument-dependent lookup.
bool operator==(const Range& a, const Range& b) { return a.begin == b.begin && a.end == b.end; }
}  // namespace kpack

TEST_CASE("with an EFI memory map, free memory is its conventional memory only, as stock KASLR takes it") {
  OvmfMachine m;
  BootEnvironment env = m.read();
  CHECK(env.free_from_efi_map);
  CHECK(
      ranges_of(env.free) ==
      std::vector<Range>{{0x100000, 0x800000}, {0x808000, 0x1000000}, {0x2000000, 0x3800000}, {0x3D00000, 0x3F00000}});
  // A 4 MiB kernel above 16 MiB: placed, and its KASLR slots drawn, only in [32 MiB, 56 MiB); e820
  // would have offered [16 MiB, 64 MiB), boot services and runtime data included.
  uint64_t at = 0;
  REQUIRE(env.free.lowest_fit(0x400000, 0x200000, 0x1000000, &at));
  CHECK(at == 0x2000000);
  REQUIRE(env.free.highest_fit(0x400000, 0x200000, &at));
  CHECK(at == 0x3400000);
  CHECK(count_slots(env.free, 0x400000, 0x200000, 0x1000000, kMaxPhysicalAddress) == 11);
  for (uint64_t i = 0; i < 11; ++i)
    CHECK(slot_address(env.free, 0x400000, 0x200000, 0x1000000, kMaxPhysicalAddress, i) == 0x2000000 + i * 0x200000);

  BootEnvironment from_e820 = m.read(RamSource::kE820);
  CHECK_FALSE(from_e820.free_from_efi_map);
  // e820's RAM, but not the map itself, which the kernel reads.
  CHECK(ranges_of(from_e820.free) ==
        std::vector<Range>{{0x100000, OvmfMachine::kMap}, {OvmfMachine::kMap + m.map.size(), 0x4000000}});
  CHECK(count_slots(from_e820.free, 0x400000, 0x200000, 0x1000000, kMaxPhysicalAddress) == 21);
}

TEST_CASE("with an EFI memory map, the init_size bytes the loader reserved at the image are free too") {
  OvmfMachine m;
  m.params.hdr.init_size = 0x800000;  // GRUB's loader data at 16 MiB holds the image
  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env, RamSource::kEfiMapWhenPresent, 0x1400000).ok());
  CHECK(ranges_of(env.free) == std::vector<Range>{{0x100000, 0x800000},
                                                  {0x808000, 0x1000000},
                                                  {0x1400000, 0x1C00000},
                                                  {0x2000000, 0x3800000},
                                                  {0x3D00000, 0x3F00000}});
}

TEST_CASE("firmware that mirrors memory: only its mirrored conventional memory is free") {
  OvmfMachine m;
  m.map.clear();
  m.descriptor(efi::kConventionalMemory, 0x100000, 0xF00);
  m.descriptor(efi::kConventionalMemory, 0x1000000, 0x1000, efi::kMemoryMoreReliable);
  m.descriptor(efi::kBootServicesData, 0x2000000, 0x1000, efi::kMemoryMoreReliable);
  m.store();
  CHECK(ranges_of(m.read().free) ==
        std::vector<Range>{{0x1000000, OvmfMachine::kMap}, {OvmfMachine::kMap + m.map.size(), 0x2000000}});
}

TEST_CASE("an EFI map without free memory (kexec_file's runtime map) leaves free memory to e820") {
  OvmfMachine m;
  m.map.clear();
  m.descriptor(efi::kRuntimeServicesData, 0x3F00000, 0x80);
  m.store();
  BootEnvironment env = m.read();
  CHECK_FALSE(env.free_from_efi_map);
  CHECK(ranges_of(env.free) ==
        std::vector<Range>{{0x100000, OvmfMachine::kMap}, {OvmfMachine::kMap + m.map.size(), 0x4000000}});
}

TEST_CASE("an EFI map that cannot be read is an error, never a fault") {
  auto expect = [](OvmfMachine& m, const char* message) {
    BootEnvironment env;
    StubStatus status = read_boot_environment(m.params, 0x90000, *m.memory, &env, RamSource::kEfiMapWhenPresent);
    REQUIRE_FALSE(status.ok());
    CHECK(std::string(status.message) == message);
  };
  {
    OvmfMachine m;
    m.params.efi_info.efi_memmap_hi = 1;
    expect(m, "EFI memory map is not in memory");
  }
  {
    OvmfMachine m;
    m.params.efi_info.efi_memdesc_size = 24;
    expect(m, "EFI memory map has no descriptors");
  }
  {
    OvmfMachine m;
    m.map.clear();
    m.descriptor(efi::kConventionalMemory, 0xFFFFFFFFFFFFF000ull, 2);
    m.store();
    expect(m, "EFI memory range wraps");
  }
}

TEST_CASE("command_line_has matches whole words only") {
  const char text[] = "console=ttyS0 kpack.debug quiet";
  CHECK(command_line_has(text, sizeof(text) - 1, "kpack.debug"));
  CHECK(command_line_has(text, sizeof(text) - 1, "quiet"));
  CHECK_FALSE(command_line_has(text, sizeof(text) - 1, "kpack"));
  CHECK_FALSE(command_line_has(text, sizeof(text) - 1, "debug"));
  const char prefixed[] = "nokpack.debug kpack.debugger";
  CHECK_FALSE(command_line_has(prefixed, sizeof(prefixed) - 1, "kpack.debug"));
}

// stub/boot_environment.cc, add_usable_ram: a RAM entry whose start lies within a page of 2^64
// survived the clamp to 4 GiB, and aligning its start up wrapped to 0 — so all of 0..4 GiB,
// BIOS data and MMIO holes included, became free memory for the kernel.
TEST_CASE("regression: an e820 RAM entry near 2^64 adds no free memory") {
  auto memory = std::make_unique<test::SimulatedMemory>(0x90000, 0x10000);
  boot::BootParams params{};
  params.e820_entries = 2;
  params.e820_table[0] = {0x100000, 0x1000000, boot::kE820Ram};
  params.e820_table[1] = {0xFFFFFFFFFFFFF001ull, 0xFFE, boot::kE820Ram};
  BootEnvironment env;
  REQUIRE(read_boot_environment(params, 0x90000, *memory, &env).ok());
  REQUIRE(env.free.count() == 1);
  CHECK(env.free.at(0).begin == 0x100000);
  CHECK(env.free.at(0).end == 0x1100000);
}

TEST_CASE("loader data below 1 MiB is recorded for the low pages, and the EFI memory map leaves free memory") {
  Machine m;
  // A setup_data node at 0x20000 (below 1 MiB, so free memory cannot show it) pointing at
  // SETUP_INDIRECT data at 0x30000, then a node at 2 MiB.
  boot::SetupData low{};
  low.type = boot::kSetupIndirect;
  low.len = sizeof(boot::SetupIndirect);
  low.next = 0x200000;
  boot::SetupIndirect indirect{};
  indirect.type = boot::kSetupIndirect | 1;
  indirect.addr = 0x30000;
  indirect.len = 0x2000;
  std::memcpy(m.memory->at(0x20000), &low, sizeof(low));
  std::memcpy(m.memory->at(0x20000 + sizeof(low)), &indirect, sizeof(indirect));
  boot::SetupData high{};
  high.len = 16;
  std::memcpy(m.memory->at(0x200000), &high, sizeof(high));
  m.params.hdr.setup_data = 0x20000;
  // An EFI memory map (kexec on a UEFI machine hands over the runtime map) at 3 MiB, without free
  // memory in it, so free memory comes from e820: the map's bytes must not be free.
  m.params.efi_info.efi_loader_signature = boot::kEfiLoaderSignature64;
  m.params.efi_info.efi_memmap = 0x300000;
  m.params.efi_info.efi_memmap_size = 0x30;
  m.params.efi_info.efi_memdesc_size = 0x30;
  efi::MemoryDescriptor runtime{};
  runtime.type = efi::kRuntimeServicesData;
  runtime.physical_start = 0x7000000;
  runtime.number_of_pages = 1;
  std::memcpy(m.memory->at(0x300000), &runtime, sizeof(runtime));

  BootEnvironment env;
  REQUIRE(read_boot_environment(m.params, 0x90000, *m.memory, &env, RamSource::kEfiMapWhenPresent).ok());
  CHECK_FALSE(env.free_from_efi_map);
  REQUIRE(env.low_loader_data_count == 2);
  CHECK(env.low_loader_data[0].begin == 0x20000);
  CHECK(env.low_loader_data[0].end == 0x20000 + sizeof(low) + sizeof(indirect));
  CHECK(env.low_loader_data[1].begin == 0x30000);
  CHECK(env.low_loader_data[1].end == 0x32000);
  CHECK_FALSE(env.low_loader_data_overflow);
  CHECK_FALSE(is_free(env, 0x300000, 0x300030));
  CHECK(is_free(env, 0x301000, 0x400000));
  CHECK_FALSE(is_free(env, 0x200000, 0x200000 + sizeof(high) + 16));
}
