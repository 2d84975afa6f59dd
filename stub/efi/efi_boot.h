// The EFI entry's parts (stub/efi/), and what they share. 64-bit code that runs on the firmware's
// identity map with boot services up; only efi_entry.cc goes past ExitBootServices.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "formats/uefi.h"
#include "formats/boot_params.h"
#include "stub/arch/halt.h"
#include "stub/entry/boot_inputs.h"
#include "stub/entry/confidential_vm.h"
#include "stub/machine/efi_configuration_table.h"
#include "stub/machine/efi_memory_map.h"
#include "stub/base/physical_memory.h"
#include "stub/unpack/unpack.h"
#include "stub/base/range.h"

namespace kpack::efi {

// The firmware, reached through its tables.
struct Firmware {
  Handle image;
  SystemTable* system;
  BootServices* boot;
};

// efi_console.cc: text on ConOut (and COM1), for errors before ExitBootServices.
void print(const Firmware& fw, const char* text);
// Every error before ExitBootServices: its line on the firmware's console, and what to return
// (kLoadError, or the firmware's own status).
EfiStatus report(const Firmware& fw, StubStatus status, StatusNumbers numbers = StatusNumbers::kPair);
EfiStatus report(const Firmware& fw, const char* message, EfiStatus status);

inline constexpr uint64_t kBelow4G = 0xFFFFFFFF;

// Pages from the firmware, below `max_address` (inclusive); 0 when there are none.
uint64_t allocate_pages(const Firmware& fw, uint64_t size, uint64_t max_address, MemoryType type = kLoaderData);

// The firmware's one instance of the protocol `kGuid` names (LocateProtocol), as `Protocol`;
// nullptr when it has none.
template <typename Protocol, const Guid& kGuid>
Protocol* locate_protocol(const Firmware& fw) {
  void* interface = nullptr;
  if (failed(fw.boot->locate_protocol(&kGuid, nullptr, &interface))) return nullptr;
  return static_cast<Protocol*>(interface);
}

// The firmware's configuration table `guid` names, looked up in the system table's array
// (stub/machine/efi_configuration_table.h); nullptr when it has none.
inline const void* firmware_table(const Firmware& fw, const Guid& guid) {
  uint64_t table = configuration_table(fw.system->configuration_table, fw.system->number_of_table_entries, guid);
  return reinterpret_cast<const void*>(table);
}

// firmware_memory.cc: the engine's memory under EFI. Reads go straight through the firmware's
// identity map; a range the engine writes is first claimed from the firmware as EfiLoaderCode at
// exactly that address, so the kernel's pages belong to it before ExitBootServices.
class FirmwareMemory final : public PhysicalMemory {
 public:
  explicit FirmwareMemory(const Firmware& fw) : fw_(fw) {}
  const uint8_t* readable(uint64_t addr, uint64_t size) override;
  uint8_t* writable(uint64_t addr, uint64_t size) override;
  // Claims `r` too (a gap between the kernel's segments); false when the firmware refuses.
  bool claim(Range r);
  // Gives every claimed page back, after an error.
  void release();

 private:
  static constexpr uint32_t kMaxClaims = 64;
  Firmware fw_;
  Range claims_[kMaxClaims];
  uint32_t claim_count_ = 0;
};

// The firmware's memory map, in a buffer that outlives ExitBootServices (efi_info points at it):
// the descriptors as GetMemoryMap wrote them (the view stub/machine/ reads), and what reading the
// map again and handing it over need besides.
struct MemoryMap {
  EfiMemoryMapView view{};  // the buffer, the bytes GetMemoryMap filled, the descriptor size
  uint64_t capacity = 0;    // the buffer's size in bytes
  uint64_t key = 0;         // what ExitBootServices asks for
  uint32_t descriptor_version = 0;
  // The buffer, ours to fill and free (the view only reads it).
  uint8_t* buffer() const { return const_cast<uint8_t*>(view.descriptors); }
};
// Allocates room for the map as it is now plus `slack` descriptors, and reads it.
EfiStatus read_memory_map(const Firmware& fw, uint64_t slack, MemoryMap* map);
// Reads it again into the same buffer (no allocation: allowed between ExitBootServices attempts).
EfiStatus reread_memory_map(const Firmware& fw, MemoryMap* map);

// The map as e820 for the kernel, with the Linux EFI stub's type mapping; entries past the zero
// page's 128 go to `extended` (a SETUP_E820_EXT node's entries, room for `extended_capacity`).
// `conventional_only`: only free memory counts as RAM, for placing the kernel before
// ExitBootServices. Returns the number of entries written to `extended`.
uint32_t memory_map_to_e820(const MemoryMap& map, bool conventional_only, boot::BootParams* params,
                            boot::E820Entry* extended, uint32_t extended_capacity);

// exit_boot_services.cc: the option ROMs (store_pci_roms), room for e820 entries past the zero
// page's 128 (and the unaccepted memory table, when the record says the kernel accepts memory
// itself), then the final map and ExitBootServices, efi_info and e820, for both EFI ways to the
// kernel. On success boot services are gone: the caller may call nothing of the firmware's but its
// runtime services.
EfiStatus leave_boot_services(const Firmware& fw, const BootInputs& inputs);

// firmware_platform.cc: a confidential VM's boot, under boot services: the kernel decoded into
// pages claimed from the firmware on the boot CPU, then ExitBootServices, then the kernel. Returns
// only when the firmware is still up, with the error shown on ConOut.
EfiStatus boot_before_exit(const Firmware& fw, const BootInputs& inputs);

// efi_initrd.cc: the initrd from the loader's LoadFile2 protocol or the command line's initrd=
// paths on the image's own volume, into boot_params' ramdisk fields. kNotFound: there is none.
EfiStatus load_initrd(const Firmware& fw, void* device_handle, const char* command_line, boot::BootParams* params);

// efi_confidential_vm.cc: the first step of both EFI entries. Which confidential VM this is, or its
// refusal printed on ConOut; then, once boot_params exist, what the kernel needs of it.
EfiStatus check_confidential_vm(const Firmware& fw, ConfidentialVm* vm);
EfiStatus store_confidential_vm_blob(const Firmware& fw, ConfidentialVm vm, boot::BootParams* params);

// efi_unaccepted_memory.cc: for a kernel that accepts memory itself, before ExitBootServices: the
// firmware told to leave unaccepted memory to the OS, and Linux's table of it installed (sized
// from `map`) or an earlier stage's taken; *table stays nullptr when the map has none.
EfiStatus prepare_unaccepted_memory(const Firmware& fw, const MemoryMap& map, LinuxUnacceptedMemory** table);

// efi_random_seed.cc: Linux's random seed table refreshed from EFI_RNG_PROTOCOL, as the Linux EFI
// stub does (efi_random_get_seed); nothing when the firmware has no RNG.
void install_random_seed(const Firmware& fw);

// efi_memory_attributes.cc: the kernel's executable segments made read-only and executable where
// the firmware has EFI_MEMORY_ATTRIBUTE_PROTOCOL (NX_COMPAT firmware maps free pages no-execute).
EfiStatus protect_kernel_text(const Firmware& fw, const UnpackResult& result);

// efi_pci_roms.cc: a SETUP_PCI node for every PCI device whose option ROM the firmware holds,
// appended to the setup_data chain in handle order, as the Linux EFI stub does (setup_efi_pci).
void store_pci_roms(const Firmware& fw, boot::BootParams* params);

// efi_video.cc: the GOP framebuffer into screen_info (nothing when there is no GOP).
void store_framebuffer(const Firmware& fw, boot::ScreenInfo* screen);

}  // namespace kpack::efi
