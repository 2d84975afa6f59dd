// The option ROMs the firmware read from PCI devices, handed to the kernel as SETUP_PCI nodes, as
// the Linux EFI stub does (setup_efi_pci and preserve_pci_rom_image in x86-stub.c): the kernel then
// takes a device's ROM from that copy (pcibios_add_device), the only one on machines whose ROM BAR
// cannot be read back once the firmware ran it.
#include "stub/efi/efi_boot.h"

namespace kpack::efi {
namespace {

// The UEFI specification caps an option ROM at 16 MiB; firmware that puts function pointers where
// RomSize belongs shows a larger size, so such a "ROM" is not copied.
constexpr uint64_t kMaxRomSize = 16ull << 20;

// Whose ROM it is: vendor and device IDs, and where the device sits.
EfiStatus identify(PciIo* pci, boot::PciSetupRom* rom) {
  uint16_t vendor = 0, device_id = 0;
  uint64_t segment = 0, bus = 0, device = 0, function = 0;
  EfiStatus status = pci->pci_read(pci, kPciIoWidthUint16, kPciVendorIdOffset, 1, &vendor);
  if (!failed(status)) status = pci->pci_read(pci, kPciIoWidthUint16, kPciDeviceIdOffset, 1, &device_id);
  if (!failed(status)) status = pci->get_location(pci, &segment, &bus, &device, &function);
  rom->vendor = vendor, rom->device_id = device_id;
  rom->segment = segment, rom->bus = bus, rom->device = device, rom->function = function;
  return status;
}

// One device's ROM in a SETUP_PCI node of loader data (it outlives ExitBootServices), or null when
// the device has none or it cannot be copied. The device is identified before anything is allocated.
boot::PciSetupRom* copy_rom(const Firmware& fw, PciIo* pci) {
  if (!pci->rom_image || !pci->rom_size || pci->rom_size > kMaxRomSize) return nullptr;
  boot::PciSetupRom identified{};
  if (failed(identify(pci, &identified))) return nullptr;
  uint64_t size = sizeof(boot::PciSetupRom) + pci->rom_size;
  void* node = nullptr;
  if (failed(fw.boot->allocate_pool(kLoaderData, size, &node))) return nullptr;
  auto* rom = static_cast<boot::PciSetupRom*>(node);
  *rom = identified;
  rom->header.type = boot::kSetupPci;
  rom->header.len = static_cast<uint32_t>(size - sizeof(boot::SetupData));
  rom->rom_length = pci->rom_size;
  __builtin_memcpy(rom + 1, pci->rom_image, pci->rom_size);
  return rom;
}

}  // namespace

void store_pci_roms(const Firmware& fw, boot::BootParams* params) {
  // Every handle with the PCI I/O protocol, in the firmware's order; a device whose ROM cannot be
  // read or copied (no memory) is left out, as stock's stub leaves it.
  uint64_t count = 0;
  Handle* handles = nullptr;
  if (failed(fw.boot->locate_handle_buffer(kLocateByProtocol, &kPciIoProtocol, nullptr, &count, &handles))) return;
  // Appended after what is chained already, in the firmware's handle order.
  ul64* link = &params->hdr.setup_data;
  while (*link) link = &reinterpret_cast<boot::SetupData*>(uint64_t{*link})->next;
  for (uint64_t i = 0; i < count; ++i) {
    void* interface = nullptr;
    if (failed(fw.boot->handle_protocol(handles[i], &kPciIoProtocol, &interface)) || !interface) continue;
    boot::PciSetupRom* rom = copy_rom(fw, static_cast<PciIo*>(interface));
    if (!rom) continue;
    *link = reinterpret_cast<uint64_t>(rom);
    link = &rom->header.next;
  }
  fw.boot->free_pool(handles);
}

}  // namespace kpack::efi
