// Leaving boot services the way the Linux EFI stub does: the PCI option ROMs, the final memory map,
// ExitBootServices with the specification's retry, and the kernel's view of the firmware (efi_info,
// e820).
#include "formats/kpack_image.h"
#include "stub/efi/efi_boot.h"
#include "stub/machine/efi_memory_map.h"

namespace kpack::efi {
namespace {

// ExitBootServices needs the key of the current map; the map changes under us (timers), so the
// specification's retry: read it again, without allocating, and try once more.
EfiStatus exit_boot_services(const Firmware& fw, MemoryMap* map) {
  EfiStatus status = fw.boot->exit_boot_services(fw.image, map->key);
  if (status != kInvalidParameter) return status;
  status = reread_memory_map(fw, map);
  if (failed(status)) return status;
  return fw.boot->exit_boot_services(fw.image, map->key);
}

// After ExitBootServices: the kernel's view of the firmware (efi_info, e820; the unaccepted memory
// table's bits, when the kernel accepts memory itself).
void hand_over_memory_map(const MemoryMap& map, const Firmware& fw, boot::BootParams* params, boot::SetupData* extended,
                          uint32_t extended_capacity, LinuxUnacceptedMemory* unaccepted) {
  boot::EfiInfo& info = params->efi_info;
  uint64_t system = reinterpret_cast<uint64_t>(fw.system), buffer = reinterpret_cast<uint64_t>(map.view.descriptors);
  info.efi_loader_signature = boot::kEfiLoaderSignature64;
  info.efi_systab = static_cast<uint32_t>(system);
  info.efi_systab_hi = static_cast<uint32_t>(system >> 32);
  info.efi_memdesc_size = static_cast<uint32_t>(map.view.descriptor_size);
  info.efi_memdesc_version = map.descriptor_version;
  info.efi_memmap = static_cast<uint32_t>(buffer);
  info.efi_memmap_hi = static_cast<uint32_t>(buffer >> 32);
  info.efi_memmap_size = static_cast<uint32_t>(map.view.size);
  auto* entries = reinterpret_cast<boot::E820Entry*>(extended + 1);
  uint32_t extra =
      efi_memory_map_to_e820(map.view, E820View::kHandover, params, entries, extended_capacity, unaccepted);
  if (!extra) return;
  extended->type = boot::kSetupE820Ext;
  extended->len = static_cast<uint32_t>(extra * sizeof(boot::E820Entry));
  extended->next = params->hdr.setup_data;
  params->hdr.setup_data = reinterpret_cast<uint64_t>(extended);
}

}  // namespace

EfiStatus leave_boot_services(const Firmware& fw, const BootInputs& inputs) {
  boot::BootParams* params = inputs.params;
  const bool kernel_accepts_memory = inputs.packer_record->flags & kRecordKernelAcceptsMemory;
  store_pci_roms(fw, params);
  MemoryMap final_map;
  EfiStatus status = read_memory_map(fw, 16, &final_map);
  if (failed(status)) return report(fw, "cannot read the memory map", status);
  uint32_t extended_capacity = static_cast<uint32_t>(final_map.capacity / final_map.view.descriptor_size);
  void* extended = nullptr;
  status = fw.boot->allocate_pool(kLoaderData, sizeof(boot::SetupData) + extended_capacity * sizeof(boot::E820Entry),
                                  &extended);
  if (failed(status)) return report(fw, "no memory for the e820 table", status);
  LinuxUnacceptedMemory* unaccepted = nullptr;
  if (kernel_accepts_memory) status = prepare_unaccepted_memory(fw, final_map, &unaccepted);
  if (failed(status)) return report(fw, "cannot hand over unaccepted memory", status);
  status = reread_memory_map(fw, &final_map);
  if (!failed(status)) status = exit_boot_services(fw, &final_map);
  if (failed(status)) return report(fw, "ExitBootServices failed", status);
  hand_over_memory_map(final_map, fw, params, static_cast<boot::SetupData*>(extended), extended_capacity, unaccepted);
  return kSuccess;
}

}  // namespace kpack::efi
