#include "stub/machine/boot_environment.h"

#include "stub/machine/efi_memory_map.h"

namespace kpack {
namespace {

// A RAM range clipped to [1 MiB, MAXMEM) and to whole pages.
StubStatus add_ram(uint64_t addr, uint64_t size, FreeMemory& free) {
  Range r = range_of(addr, size);
  if (r.end > kMaxPhysicalAddress) r.end = kMaxPhysicalAddress;
  if (r.begin < kLowestUsable) r.begin = kLowestUsable;
  // Entirely above MAXMEM (or below 1 MiB): skip it, also because aligning a begin near 2^64 up
  // would wrap to 0 and turn the entry into "all of memory is RAM".
  if (r.empty()) return StubStatus::success();
  return free.add(Range{align_up(r.begin, 4096), align_down(r.end, 4096)});
}

StubStatus add_usable_ram(const boot::BootParams& params, FreeMemory& free) {
  uint32_t entries = params.e820_entries;
  if (entries > boot::kE820MaxEntries) return fail("e820 map has too many entries", entries);
  if (entries == 0) return fail("the loader passed no e820 memory map");
  for (uint32_t i = 0; i < entries; ++i) {
    const boot::E820Entry& e = params.e820_table[i];
    if (e.type == boot::kE820Ram) KPACK_TRY(add_ram(e.addr, e.size, free));
  }
  // Entries of other types win where the map overlaps itself.
  for (uint32_t i = 0; i < entries; ++i) {
    const boot::E820Entry& e = params.e820_table[i];
    if (e.type != boot::kE820Ram) KPACK_TRY(free.remove(range_of(e.addr, e.size)));
  }
  return StubStatus::success();
}

bool has_efi_memory_map(const boot::EfiInfo& info) {
  return info.efi_loader_signature == boot::kEfiLoaderSignature64 && info.efi_memmap_size != 0;
}

// GRUB's EFI `linux` and kexec on a UEFI machine: e820 calls boot services and loader memory RAM,
// and the firmware may still need some of it; only the map's conventional memory is surely free.
StubStatus add_efi_free_memory(const boot::EfiInfo& info, PhysicalMemory& memory, FreeMemory& free) {
  uint64_t address = info.efi_memmap | (uint64_t{info.efi_memmap_hi} << 32);
  EfiMemoryMapView map{memory.readable(address, info.efi_memmap_size), info.efi_memmap_size, info.efi_memdesc_size};
  if (!map.descriptors) return fail("EFI memory map is not in memory", address, map.size);
  if (descriptor_count(map) == 0) return fail("EFI memory map has no descriptors", map.size, map.descriptor_size);
  bool mirrored_only = has_mirrored_memory(map);
  for (uint64_t i = 0, count = descriptor_count(map); i < count; ++i) {
    const efi::MemoryDescriptor& d = descriptor_at(map, i);
    if (d.number_of_pages > (~0ull - d.physical_start) / efi::kPageSize) return fail("EFI memory range wraps", i);
    if (is_free_for_kernel(d, mirrored_only))
      KPACK_TRY(add_ram(d.physical_start, d.number_of_pages * efi::kPageSize, free));
  }
  return StubStatus::success();
}

// The command line's bytes, its NUL included.
StubStatus find_command_line(const boot::BootParams& params, PhysicalMemory& memory, Range* out) {
  uint64_t cmdline = params.command_line_address();
  uint64_t max = params.hdr.cmdline_size ? uint64_t{params.hdr.cmdline_size} : 255;
  // It may lie above 4 GiB (a 64-bit loader, XLF_CAN_BE_LOADED_ABOVE_4G): `memory` decides.
  if (max > ~0ull - cmdline) max = ~0ull - cmdline;
  // Read byte by byte: the string's end is only known once found.
  uint64_t length = 0;
  while (length < max) {
    const uint8_t* c = memory.readable(cmdline + length, 1);
    if (!c) return fail("command line runs out of memory", cmdline);
    if (*c == 0) break;
    ++length;
  }
  *out = Range{cmdline, cmdline + length + 1};
  return StubStatus::success();
}

// Loader data the kernel reads later: out of free memory, and recorded when it begins below 1 MiB.
StubStatus keep_loader_data(BootEnvironment& env, Range r) {
  KPACK_TRY(env.free.remove(r));
  if (r.empty() || r.begin >= kLowestUsable) return StubStatus::success();
  if (env.low_loader_data_count == kMaxLowLoaderData)
    env.low_loader_data_overflow = true;
  else
    env.low_loader_data[env.low_loader_data_count++] = r;
  return StubStatus::success();
}

}  // namespace

StubStatus read_boot_environment(const boot::BootParams& params, uint64_t boot_params_addr, PhysicalMemory& memory,
                                 BootEnvironment* out, RamSource source, uint64_t image_base) {
  BootEnvironment env;
  if (source != RamSource::kE820 && has_efi_memory_map(params.efi_info))
    KPACK_TRY(add_efi_free_memory(params.efi_info, memory, env.free));
  // kexec_file_load hands over the runtime map only, no free memory in it: e820 is all there is.
  env.free_from_efi_map = env.free.count() != 0;
  if (!env.free_from_efi_map) KPACK_TRY(add_usable_ram(params, env.free));
  // Where the stock kernel decompresses itself: the loader allocated it for the kernel.
  else if (source == RamSource::kEfiMapWhenPresent)
    KPACK_TRY(add_ram(image_base, params.hdr.init_size, env.free));
  KPACK_TRY(env.free.remove(range_of(boot_params_addr, sizeof(boot::BootParams))));
  // The EFI memory map, which the kernel reads from efi_info (GRUB's EFI `linux`, kexec on UEFI).
  if (has_efi_memory_map(params.efi_info)) {
    uint64_t map = params.efi_info.efi_memmap | (uint64_t{params.efi_info.efi_memmap_hi} << 32);
    KPACK_TRY(keep_loader_data(env, range_of(map, params.efi_info.efi_memmap_size)));
  }

  if (params.command_line_address()) {
    KPACK_TRY(find_command_line(params, memory, &env.command_line));
    KPACK_TRY(env.free.remove(env.command_line));
  }

  uint64_t initrd = params.hdr.ramdisk_image | (uint64_t{params.ext_ramdisk_image} << 32);
  uint64_t initrd_size = params.hdr.ramdisk_size | (uint64_t{params.ext_ramdisk_size} << 32);
  if (initrd_size) {
    env.initrd = range_of(initrd, initrd_size);
    if (env.initrd.empty()) return fail("initrd range wraps around", initrd, initrd_size);
    KPACK_TRY(env.free.remove(env.initrd));
  }

  // Every node, and the data a SETUP_INDIRECT node points at, stays where the loader put it.
  for (uint64_t node = params.hdr.setup_data; node; ++env.setup_data_nodes) {
    if (env.setup_data_nodes == kMaxSetupDataNodes) return fail("setup_data list too long or circular");
    const uint8_t* bytes = memory.readable(node, sizeof(boot::SetupData));
    if (!bytes) return fail("setup_data is not in memory", node);
    const auto& header = *reinterpret_cast<const boot::SetupData*>(bytes);
    uint64_t data = node + sizeof(boot::SetupData);
    Range whole = range_of(node, sizeof(boot::SetupData) + uint64_t{header.len});
    if (whole.empty()) return fail("setup_data wraps around", node);
    KPACK_TRY(keep_loader_data(env, whole));
    if (header.type == boot::kSetupIndirect && header.len >= sizeof(boot::SetupIndirect)) {
      const uint8_t* body = memory.readable(data, sizeof(boot::SetupIndirect));
      if (!body) return fail("SETUP_INDIRECT node is not in memory", node);
      const auto& indirect = *reinterpret_cast<const boot::SetupIndirect*>(body);
      Range target = range_of(indirect.addr, indirect.len);
      if (target.empty() && indirect.len) return fail("SETUP_INDIRECT data wraps around", indirect.addr);
      KPACK_TRY(keep_loader_data(env, target));
    }
    if (header.type == boot::kSetupRngSeed) env.rng_seed = range_of(data, header.len);
    node = header.next;
  }
  *out = env;
  return StubStatus::success();
}

}  // namespace kpack
