#include "stub/entry/pvh_boot_params.h"

namespace kpack {
namespace {

constexpr uint64_t kIsaStart = 0xA0000, kIsaEnd = 0x100000;  // ISA_START_ADDRESS, ISA_END_ADDRESS

bool below(uint64_t address, uint64_t size, uint64_t limit) { return address < limit && size <= limit - address; }

}  // namespace

StubStatus check_pvh_start_info(const pvh::StartInfo& info, uint64_t limit) {
  if (info.magic != pvh::kStartInfoMagic) return fail("PVH: hvm_start_info has a wrong magic", info.magic);
  if (info.version < 1 || info.memmap_entries == 0)
    return fail("PVH: hvm_start_info has no memory map (version, entries)", info.version, info.memmap_entries);
  // init_pvh_bootparams adds the ISA range as one more entry.
  if (info.memmap_entries > boot::kE820MaxEntries - 1)
    return fail("PVH: the memory map has more entries than the zero page holds", info.memmap_entries);
  if (!below(info.memmap_paddr, uint64_t{info.memmap_entries} * sizeof(pvh::MemmapEntry), limit))
    return fail("PVH: the memory map lies out of reach", info.memmap_paddr, info.memmap_entries);
  if (info.cmdline_paddr && !below(info.cmdline_paddr, kPvhCommandLineSize + 1, limit))
    return fail("PVH: the command line lies out of reach", info.cmdline_paddr);
  if (info.nr_modules && !below(info.modlist_paddr, sizeof(pvh::Module), limit))
    return fail("PVH: the module list lies out of reach", info.modlist_paddr, info.nr_modules);
  return StubStatus::success();
}

void boot_params_from_start_info(const pvh::StartInfo& info, const pvh::MemmapEntry* map, const pvh::Module* initrd,
                                 boot::BootParams* params) {
  // A loop, not an assignment: GCC would make one a memset call, which may not run before relocation
  // any more than here.
  auto* bytes = reinterpret_cast<volatile uint8_t*>(params);
  for (uint64_t i = 0; i < sizeof(*params); ++i) bytes[i] = 0;
  uint32_t entries = info.memmap_entries;
  for (uint32_t i = 0; i < entries; ++i) {
    params->e820_table[i].addr = map[i].addr;
    params->e820_table[i].size = map[i].size;
    params->e820_table[i].type = map[i].type;
  }
  params->e820_table[entries].addr = kIsaStart;
  params->e820_table[entries].size = kIsaEnd - kIsaStart;
  params->e820_table[entries].type = boot::kE820Reserved;
  params->e820_entries = static_cast<uint8_t>(entries + 1);
  params->set_command_line_address(info.cmdline_paddr);
  if (initrd) {
    params->hdr.ramdisk_image = static_cast<uint32_t>(initrd->paddr);
    params->ext_ramdisk_image = static_cast<uint32_t>(initrd->paddr >> 32);
    params->hdr.ramdisk_size = static_cast<uint32_t>(initrd->size);
    params->ext_ramdisk_size = static_cast<uint32_t>(initrd->size >> 32);
  }
  params->hdr.version = kPvhBootProtocol;
  params->hdr.type_of_loader = kPvhLoaderType;
  params->hdr.cmdline_size = kPvhCommandLineSize;
  params->acpi_rsdp_addr = info.rsdp_paddr;
}

}  // namespace kpack
