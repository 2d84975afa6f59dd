// The firmware's memory map turned into the kernel's e820 table, as the Linux EFI stub does it
// (setup_e820 in drivers/firmware/efi/libstub/x86-stub.c). Pure, so the host tests it on recorded
// maps; the EFI entry (stub/efi/firmware_memory.cc) only asks the firmware for the map.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/efi_memory.h"
#include "formats/uefi.h"

namespace kpack {

// A map as GetMemoryMap returns it: `size` bytes of descriptors `descriptor_size` apart.
struct EfiMemoryMapView {
  const uint8_t* descriptors;
  uint64_t size;
  uint64_t descriptor_size;  // at least sizeof(efi::MemoryDescriptor); OVMF's is 48
};

// How many descriptors the map holds at its stride; none when the stride is shorter than a descriptor
// (no map the specification allows), so nothing is read from it.
uint64_t descriptor_count(const EfiMemoryMapView& map);
inline const efi::MemoryDescriptor& descriptor_at(const EfiMemoryMapView& map, uint64_t index) {
  return *reinterpret_cast<const efi::MemoryDescriptor*>(map.descriptors + index * map.descriptor_size);
}

// Where the stock decompressor lets the kernel go (process_efi_entries in kaslr.c): conventional
// memory only (firmware has been seen to crash when boot services memory is reused), never memory
// set aside for a specific purpose, and only mirrored memory when the firmware mirrors any.
bool has_mirrored_memory(const EfiMemoryMapView& map);
bool is_free_for_kernel(const efi::MemoryDescriptor& descriptor, bool mirrored_only);

enum class E820View : uint8_t {
  kHandover,  // every range, typed for the kernel after ExitBootServices
  kFreeOnly,  // conventional memory not soft-reserved, as RAM: where the kernel may go under boot services
};

// The e820 type of one descriptor; kFreeOnly calls everything but free conventional memory reserved.
uint32_t e820_type_of(const efi::MemoryDescriptor& descriptor, E820View view);

// Fills params->e820_table and e820_entries, adjacent ranges of one type merged into one entry;
// entries past the zero page's 128 go to `extended` (room for `extended_capacity`), and what does
// not fit there either is left out. Returns the number written to `extended`.
// `unaccepted`: the kernel accepts memory itself (kHandover only). Unaccepted memory is then RAM
// where whole units of the table cover it, their bits set (unaccepted_memory.h), and reserved
// elsewhere; without a table all of it is reserved.
uint32_t efi_memory_map_to_e820(const EfiMemoryMapView& map, E820View view, boot::BootParams* params,
                                boot::E820Entry* extended, uint32_t extended_capacity,
                                efi::LinuxUnacceptedMemory* unaccepted = nullptr);

}  // namespace kpack
