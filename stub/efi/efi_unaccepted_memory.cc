// Unaccepted memory under EFI, as the Linux EFI stub of a kernel built with CONFIG_UNACCEPTED_MEMORY
// handles it (6.5+, x86-stub.c and unaccepted_memory.c). Before ExitBootServices: the firmware is
// told the OS accepts memory itself (setup_unaccepted_memory), and the table of what is still
// unaccepted is installed for the kernel (allocate_unaccepted_bitmap); its bits are set from the
// final map (efi_entry.cc, efi_memory_map_to_e820). A kernel without it gets neither, as from its
// own stub: EDK2 then accepts all memory at ExitBootServices, and the first attempt fails on the
// changed map, which exit_boot_services reads again.
#include "stub/efi/efi_boot.h"
#include "stub/machine/unaccepted_memory.h"

namespace kpack::efi {
namespace {

// Without this call EDK2 accepts everything when boot services end (its ResolveUnacceptedMemory).
void allow_unaccepted_memory(const Firmware& fw) {
  auto* acceptance = locate_protocol<MemoryAcceptance, kMemoryAcceptanceProtocol>(fw);
  if (!acceptance) return;
  if (failed(acceptance->allow_unaccepted_memory(acceptance)))
    print(fw, "kpack: the firmware's memory acceptance protocol failed\n");
}

}  // namespace

EfiStatus prepare_unaccepted_memory(const Firmware& fw, const MemoryMap& map, LinuxUnacceptedMemory** table) {
  *table = nullptr;
  allow_unaccepted_memory(fw);
  // An earlier stage's table is kept and marked further, as stock does; one it cannot read ends the boot.
  auto* earlier =
      static_cast<LinuxUnacceptedMemory*>(const_cast<void*>(firmware_table(fw, kLinuxUnacceptedMemoryTable)));
  if (earlier) {
    if (earlier->version != kUnacceptedMemoryTableVersion) return kUnsupported;
    *table = earlier;
    return kSuccess;
  }
  UnacceptedBitmapExtent extent = unaccepted_bitmap_extent(map.view);
  if (!extent.bytes) return kSuccess;
  // ACPI reclaim memory, as stock allocates it: the kernel keeps the table after boot.
  void* buffer = nullptr;
  EfiStatus status = fw.boot->allocate_pool(kAcpiReclaimMemory, sizeof(LinuxUnacceptedMemory) + extent.bytes, &buffer);
  if (failed(status)) return status;
  auto* fresh = static_cast<LinuxUnacceptedMemory*>(buffer);
  init_unaccepted_table(fresh, extent);
  status = fw.boot->install_configuration_table(&kLinuxUnacceptedMemoryTable, fresh);
  if (failed(status)) {
    fw.boot->free_pool(fresh);
    return status;
  }
  *table = fresh;
  return kSuccess;
}

}  // namespace kpack::efi
