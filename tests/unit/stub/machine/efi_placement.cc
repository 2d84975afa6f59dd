// Placement on recorded EFI memory maps (issue 22): on a UEFI machine entered through the boot
// protocol (GRUB's EFI `linux`), the legacy entries take free memory from efi_info's map, and
// whatever seed KASLR draws, the kernel lands in EFI_CONVENTIONAL_MEMORY only, the one type stock's
// process_efi_entries (arch/x86/boot/compressed/kaslr.c) takes; never in boot services, runtime,
// ACPI, persistent, unaccepted or soft-reserved memory, which the e820 such a loader writes may
// call RAM. The EFI entry's own view (the kFreeOnly e820 it writes) is held to the same rule.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <vector>

#include "formats/boot_params.h"
#include "formats/efi_memory.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/efi_memory_map.h"
#include "stub/unpack/kaslr.h"
#include "tests/support/simulated_memory.h"

using namespace kpack;

namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kRuntime = 1ull << 63;  // EFI_MEMORY_RUNTIME
constexpr uint64_t kCacheable = 0xF;       // UC WC WT WB, as OVMF gives every RAM descriptor
constexpr uint64_t kStride = 48;           // OVMF's descriptor_size
constexpr uint64_t kMapAddress = 0x10000;
constexpr uint64_t kFloor = 16 * kMiB;     // LOAD_PHYSICAL_ADDR: no kernel below it
constexpr uint64_t kAlignment = 2 * kMiB;  // CONFIG_PHYSICAL_ALIGN

struct Descriptor {
  uint32_t type;
  uint64_t start, pages;
  uint64_t attribute = 0;
};

// OVMF (/usr/share/qemu/OVMF.fd, QEMU -m 512M, the stock Debian 6.1 image through -kernel) as the
// kernel printed the map it was handed with efi=debug: all 120 descriptors, in the firmware's order.
const std::vector<Descriptor> kOvmfMap = {
    {efi::kBootServicesCode, 0x0, 0x1},
    {efi::kConventionalMemory, 0x1000, 0x9f},
    {efi::kConventionalMemory, 0x100000, 0x700},
    {efi::kAcpiMemoryNvs, 0x800000, 0x8},
    {efi::kConventionalMemory, 0x808000, 0x3},
    {efi::kAcpiMemoryNvs, 0x80b000, 0x1},
    {efi::kConventionalMemory, 0x80c000, 0x4},
    {efi::kAcpiMemoryNvs, 0x810000, 0xf0},
    {efi::kBootServicesData, 0x900000, 0xc00},
    {efi::kConventionalMemory, 0x1500000, 0xa300},
    {efi::kLoaderCode, 0xb800000, 0x3400},
    {efi::kConventionalMemory, 0xec00000, 0xcf75},
    {efi::kBootServicesData, 0x1bb75000, 0x20},
    {efi::kConventionalMemory, 0x1bb95000, 0x9f},
    {efi::kLoaderCode, 0x1bc34000, 0xdcd},
    {efi::kConventionalMemory, 0x1ca01000, 0xd8c},
    {efi::kLoaderData, 0x1d78d000, 0xa},
    {efi::kBootServicesData, 0x1d797000, 0x29},
    {efi::kBootServicesCode, 0x1d7c0000, 0x9e},
    {efi::kConventionalMemory, 0x1d85e000, 0x2},
    {efi::kLoaderData, 0x1d860000, 0x2},
    {efi::kBootServicesData, 0x1d862000, 0x44},
    {efi::kBootServicesCode, 0x1d8a6000, 0x5},
    {efi::kBootServicesData, 0x1d8ab000, 0x1},
    {efi::kBootServicesCode, 0x1d8ac000, 0x1d},
    {efi::kBootServicesData, 0x1d8c9000, 0x4},
    {efi::kBootServicesCode, 0x1d8cd000, 0xe},
    {efi::kBootServicesData, 0x1d8db000, 0x2},
    {efi::kBootServicesCode, 0x1d8dd000, 0x12},
    {efi::kBootServicesData, 0x1d8ef000, 0x1},
    {efi::kBootServicesCode, 0x1d8f0000, 0x1a},
    {efi::kBootServicesData, 0x1d90a000, 0x5},
    {efi::kBootServicesCode, 0x1d90f000, 0x14},
    {efi::kBootServicesData, 0x1d923000, 0x2},
    {efi::kBootServicesCode, 0x1d925000, 0x1f},
    {efi::kBootServicesData, 0x1d944000, 0x9},
    {efi::kBootServicesCode, 0x1d94d000, 0x23},
    {efi::kBootServicesData, 0x1d970000, 0x2},
    {efi::kBootServicesCode, 0x1d972000, 0x14},
    {efi::kBootServicesData, 0x1d986000, 0x7},
    {efi::kBootServicesCode, 0x1d98d000, 0x6},
    {efi::kBootServicesData, 0x1d993000, 0x3},
    {efi::kBootServicesCode, 0x1d996000, 0xe},
    {efi::kBootServicesData, 0x1d9a4000, 0x1},
    {efi::kBootServicesCode, 0x1d9a5000, 0xb},
    {efi::kBootServicesData, 0x1d9b0000, 0x2},
    {efi::kBootServicesCode, 0x1d9b2000, 0xd},
    {efi::kBootServicesData, 0x1d9bf000, 0x5},
    {efi::kBootServicesCode, 0x1d9c4000, 0xd},
    {efi::kBootServicesData, 0x1d9d1000, 0x3},
    {efi::kBootServicesCode, 0x1d9d4000, 0xc},
    {efi::kBootServicesData, 0x1d9e0000, 0x2},
    {efi::kBootServicesCode, 0x1d9e2000, 0x3},
    {efi::kBootServicesData, 0x1d9e5000, 0x1},
    {efi::kBootServicesCode, 0x1d9e6000, 0x8},
    {efi::kBootServicesData, 0x1d9ee000, 0xd8b},
    {efi::kBootServicesCode, 0x1e779000, 0x5},
    {efi::kBootServicesData, 0x1e77e000, 0x1},
    {efi::kBootServicesCode, 0x1e77f000, 0x2},
    {efi::kBootServicesData, 0x1e781000, 0x1},
    {efi::kBootServicesCode, 0x1e782000, 0x14},
    {efi::kBootServicesData, 0x1e796000, 0x3},
    {efi::kBootServicesCode, 0x1e799000, 0x67},
    {efi::kBootServicesData, 0x1e800000, 0x204},
    {efi::kBootServicesCode, 0x1ea04000, 0x2},
    {efi::kBootServicesData, 0x1ea06000, 0x2},
    {efi::kBootServicesCode, 0x1ea08000, 0x11},
    {efi::kBootServicesData, 0x1ea19000, 0x1},
    {efi::kBootServicesCode, 0x1ea1a000, 0xa},
    {efi::kBootServicesData, 0x1ea24000, 0x3},
    {efi::kBootServicesCode, 0x1ea27000, 0x15},
    {efi::kBootServicesData, 0x1ea3c000, 0x4},
    {efi::kBootServicesCode, 0x1ea40000, 0x9},
    {efi::kBootServicesData, 0x1ea49000, 0x7},
    {efi::kBootServicesCode, 0x1ea50000, 0x4},
    {efi::kBootServicesData, 0x1ea54000, 0x9},
    {efi::kBootServicesCode, 0x1ea5d000, 0x1},
    {efi::kBootServicesData, 0x1ea5e000, 0x6},
    {efi::kBootServicesCode, 0x1ea64000, 0x41},
    {efi::kBootServicesData, 0x1eaa5000, 0xb},
    {efi::kBootServicesCode, 0x1eab0000, 0xb},
    {efi::kRuntimeServicesData, 0x1eabb000, 0xc1, kRuntime},
    {efi::kBootServicesData, 0x1eb7c000, 0x400},
    {efi::kBootServicesCode, 0x1ef7c000, 0x6f},
    {efi::kBootServicesData, 0x1efeb000, 0x8},
    {efi::kBootServicesCode, 0x1eff3000, 0x1a},
    {efi::kBootServicesData, 0x1f00d000, 0x3},
    {efi::kBootServicesCode, 0x1f010000, 0x9},
    {efi::kBootServicesData, 0x1f019000, 0x1},
    {efi::kBootServicesCode, 0x1f01a000, 0x1},
    {efi::kBootServicesData, 0x1f01b000, 0x2},
    {efi::kBootServicesCode, 0x1f01d000, 0x1},
    {efi::kBootServicesData, 0x1f01e000, 0x2},
    {efi::kBootServicesCode, 0x1f020000, 0x4},
    {efi::kBootServicesData, 0x1f024000, 0x2},
    {efi::kBootServicesCode, 0x1f026000, 0x16},
    {efi::kBootServicesData, 0x1f03c000, 0x1},
    {efi::kBootServicesCode, 0x1f03d000, 0x1},
    {efi::kBootServicesData, 0x1f03e000, 0x14},
    {efi::kBootServicesCode, 0x1f052000, 0x4},
    {efi::kBootServicesData, 0x1f056000, 0x1},
    {efi::kBootServicesCode, 0x1f057000, 0x2},
    {efi::kBootServicesData, 0x1f059000, 0x3},
    {efi::kBootServicesCode, 0x1f05c000, 0xb},
    {efi::kBootServicesData, 0x1f067000, 0x1},
    {efi::kBootServicesCode, 0x1f068000, 0x3},
    {efi::kBootServicesData, 0x1f06b000, 0x482},
    {efi::kRuntimeServicesData, 0x1f4ed000, 0x100, kRuntime},
    {efi::kRuntimeServicesCode, 0x1f5ed000, 0x100, kRuntime},
    {efi::kReservedMemory, 0x1f6ed000, 0x80},
    {efi::kAcpiReclaimMemory, 0x1f76d000, 0x12},
    {efi::kAcpiMemoryNvs, 0x1f77f000, 0x80},
    {efi::kBootServicesData, 0x1f7ff000, 0x601},
    {efi::kConventionalMemory, 0x1fe00000, 0xdb},
    {efi::kBootServicesData, 0x1fedb000, 0x20},
    {efi::kBootServicesCode, 0x1fefb000, 0x33},
    {efi::kBootServicesData, 0x1ff2e000, 0x11},
    {efi::kBootServicesCode, 0x1ff3f000, 0x19},
    {efi::kRuntimeServicesData, 0x1ff58000, 0x20, kRuntime},
    {efi::kAcpiMemoryNvs, 0x1ff78000, 0x88},
};

// Every type interleaved with conventional memory, including the ones OVMF does not show: reserved,
// unusable, MMIO, persistent and unaccepted memory, soft-reserved and runtime conventional memory.
const std::vector<Descriptor> kInterleavedMap = {
    {efi::kConventionalMemory, 0x0, 0xA0},
    {efi::kReservedMemory, 0xA0000, 0x60},
    {efi::kConventionalMemory, 0x100000, 0xF00},
    {efi::kBootServicesData, 0x1000000, 0x800},
    {efi::kConventionalMemory, 0x1800000, 0x1800},
    {efi::kUnacceptedMemory, 0x3000000, 0x2000},
    {efi::kConventionalMemory, 0x5000000, 0x2000},
    {efi::kAcpiReclaimMemory, 0x7000000, 0x10},
    {efi::kPersistentMemory, 0x7010000, 0x4FF0},
    {efi::kConventionalMemory, 0xC000000, 0x3000, efi::kMemorySpecificPurpose},
    {efi::kLoaderData, 0xF000000, 0x1000},
    {efi::kConventionalMemory, 0x10000000, 0x4000},
    {efi::kRuntimeServicesCode, 0x14000000, 0x100, kRuntime},
    {efi::kUnusableMemory, 0x14100000, 0x1F00},
    {efi::kConventionalMemory, 0x16000000, 0x1000},
    {efi::kBootServicesCode, 0x17000000, 0x1000},
    {efi::kAcpiMemoryNvs, 0x18000000, 0x10},
    {efi::kMemoryMappedIo, 0x18010000, 0x7FF0, kRuntime},
    {efi::kConventionalMemory, 0x20000000, 0x8000},
    {efi::kRuntimeServicesData, 0x28000000, 0x100, kRuntime},
    {efi::kConventionalMemory, 0x28100000, 0x7F00},
};

// A machine a boot-protocol loader left under UEFI firmware: `map` in efi_info, and an e820 that
// calls everything from 1 MiB to the map's end RAM (the kind of e820 that must not be trusted).
struct UefiMachine {
  std::vector<Descriptor> map;
  test::SimulatedMemory memory{0, 0x20000};
  boot::BootParams params{};

  explicit UefiMachine(const std::vector<Descriptor>& descriptors) : map(descriptors) {
    std::vector<uint8_t> bytes(map.size() * kStride, 0xEE);
    for (size_t i = 0; i < map.size(); ++i) {
      efi::MemoryDescriptor d{};
      d.type = map[i].type, d.physical_start = map[i].start, d.number_of_pages = map[i].pages;
      d.attribute = map[i].attribute | kCacheable;
      std::memcpy(&bytes[i * kStride], &d, sizeof(d));
    }
    memory.load(kMapAddress, bytes);
    params.efi_info.efi_loader_signature = boot::kEfiLoaderSignature64;
    params.efi_info.efi_memmap = kMapAddress;
    params.efi_info.efi_memmap_size = static_cast<uint32_t>(bytes.size());
    params.efi_info.efi_memdesc_size = kStride;
    params.efi_info.efi_memdesc_version = 1;
    boot::E820Entry& all = params.e820_table[params.e820_entries++];
    all.addr = kMiB;
    all.size = end() - kMiB;
    all.type = boot::kE820Ram;
  }

  uint64_t end() const {
    uint64_t last = 0;
    for (const Descriptor& d : map) last = std::max(last, d.start + d.pages * efi::kPageSize);
    return last;
  }

  // Conventional memory the kernel may take, adjacent descriptors joined.
  FreeMemory conventional() const {
    FreeMemory free;
    for (const Descriptor& d : map)
      if (d.type == efi::kConventionalMemory && !(d.attribute & efi::kMemorySpecificPurpose))
        REQUIRE(free.add(range_of(d.start, d.pages * efi::kPageSize)).ok());
    return free;
  }

  // What the legacy entries see: free memory from efi_info's map.
  FreeMemory legacy_entry_view() {
    BootEnvironment env;
    REQUIRE(read_boot_environment(params, 0x90000, memory, &env, RamSource::kEfiMapWhenPresent).ok());
    REQUIRE(env.free_from_efi_map);
    return env.free;
  }

  // What the EFI entry sees: the map's free memory written to e820 (kFreeOnly), then read as e820.
  FreeMemory efi_entry_view() {
    boot::BootParams own{};
    EfiMemoryMapView view{memory.readable(kMapAddress, map.size() * kStride), map.size() * kStride, kStride};
    efi_memory_map_to_e820(view, E820View::kFreeOnly, &own, nullptr, 0);
    BootEnvironment env;
    REQUIRE(read_boot_environment(own, 0x90000, memory, &env, RamSource::kE820).ok());
    return env.free;
  }
};

// Every kernel of `span` bytes the engine may place in `free`: each KASLR slot (as the unpack
// engine draws them: the command line's exclusions applied, then slot number seed % count), for
// `seeds` seeds from the engine's mixer and then every slot number, and the lowest fit used when
// KASLR is off. Returns the number of slots; each placement is checked against `conventional`.
uint64_t check_every_placement(const FreeMemory& free, const FreeMemory& conventional, uint64_t span) {
  FreeMemory allowed = free;
  REQUIRE(apply_kaslr_options(KaslrOptions{}, allowed).ok());
  uint64_t slots = count_slots(allowed, span, kAlignment, kFloor, kMaxPhysicalAddress);
  REQUIRE(slots > 0);
  auto check = [&](uint64_t base) {
    CAPTURE(base);
    CHECK(base % kAlignment == 0);
    CHECK(base >= kFloor);
    CHECK(conventional.contains(range_of(base, span)));
  };
  std::set<uint64_t> drawn;
  uint64_t state = 0;
  for (uint64_t seed = 0; seed < 4096; ++seed) {
    state = mix_entropy(state, seed);
    uint64_t base = slot_address(allowed, span, kAlignment, kFloor, kMaxPhysicalAddress, state % slots);
    check(base);
    drawn.insert(base);
  }
  for (uint64_t index = 0; index < slots; ++index)
    check(slot_address(allowed, span, kAlignment, kFloor, kMaxPhysicalAddress, index));
  uint64_t lowest = 0;
  REQUIRE(free.lowest_fit(span, kAlignment, kFloor, &lowest));
  check(lowest);
  // The seeds reach every slot, so the checks above saw the whole range KASLR draws from.
  CHECK(drawn.size() == slots);
  return slots;
}

}  // namespace

TEST_CASE("OVMF's recorded map: every placement and KASLR slot of the legacy entries is conventional memory") {
  UefiMachine ovmf(kOvmfMap);
  FreeMemory conventional = ovmf.conventional();
  FreeMemory free = ovmf.legacy_entry_view();
  // Slots in the conventional runs at 21-184 MiB, 236-443 MiB and 458-471 MiB for a 4, 16 and
  // 48 MiB kernel; the e820 alone would offer every 2 MiB step from 16 MiB to the end of 512 MiB,
  // boot services, runtime and ACPI memory included.
  CHECK(check_every_placement(free, conventional, 4 * kMiB) == 186);
  CHECK(check_every_placement(free, conventional, 16 * kMiB) == 170);
  CHECK(check_every_placement(free, conventional, 48 * kMiB) == 138);
  CHECK(check_every_placement(ovmf.efi_entry_view(), conventional, 16 * kMiB) == 170);

  BootEnvironment e820_only;
  REQUIRE(read_boot_environment(ovmf.params, 0x90000, ovmf.memory, &e820_only, RamSource::kE820).ok());
  CHECK(count_slots(e820_only.free, 16 * kMiB, kAlignment, kFloor, kMaxPhysicalAddress) == 241);
}

TEST_CASE("every memory type interleaved: only conventional memory, never soft-reserved, takes the kernel") {
  UefiMachine machine(kInterleavedMap);
  FreeMemory conventional = machine.conventional();
  for (FreeMemory free : {machine.legacy_entry_view(), machine.efi_entry_view()}) {
    CHECK(check_every_placement(free, conventional, 4 * kMiB) == 189);
    CHECK(check_every_placement(free, conventional, 32 * kMiB) == 115);
    // Above 16 MiB, the free ranges are exactly the conventional descriptors that are not soft-reserved.
    std::vector<Range> ranges;
    for (uint32_t i = 0; i < free.count(); ++i)
      if (free.at(i).end > kFloor) ranges.push_back(free.at(i));
    REQUIRE(ranges.size() == 6);
    CHECK((ranges[0].begin == 0x1800000 && ranges[0].end == 0x3000000));
    CHECK((ranges[1].begin == 0x5000000 && ranges[1].end == 0x7000000));
    CHECK((ranges[2].begin == 0x10000000 && ranges[2].end == 0x14000000));
    CHECK((ranges[3].begin == 0x16000000 && ranges[3].end == 0x17000000));
    CHECK((ranges[4].begin == 0x20000000 && ranges[4].end == 0x28000000));
    CHECK((ranges[5].begin == 0x28100000 && ranges[5].end == 0x30000000));
  }
}
