// The UEFI memory map's layout (UEFI 2.10, 7.2 GetMemoryMap): what the EFI entry reads from the
// firmware and hands to the kernel through boot_params.efi_info, and what the engine turns into e820.
#pragma once

#include <stdint.h>

namespace kpack::efi {

enum MemoryType : uint32_t {
  kReservedMemory = 0,
  kLoaderCode = 1,
  kLoaderData = 2,
  kBootServicesCode = 3,
  kBootServicesData = 4,
  kRuntimeServicesCode = 5,
  kRuntimeServicesData = 6,
  kConventionalMemory = 7,
  kUnusableMemory = 8,
  kAcpiReclaimMemory = 9,
  kAcpiMemoryNvs = 10,
  kMemoryMappedIo = 11,
  kMemoryMappedIoPortSpace = 12,
  kPalCode = 13,
  kPersistentMemory = 14,
  kUnacceptedMemory = 15,
};
inline constexpr uint64_t kMemoryXp = 0x4000;                // EFI_MEMORY_XP: not executable
inline constexpr uint64_t kMemoryMoreReliable = 0x10000;     // EFI_MEMORY_MORE_RELIABLE: mirrored
inline constexpr uint64_t kMemoryRo = 0x20000;               // EFI_MEMORY_RO: read-only
inline constexpr uint64_t kMemorySpecificPurpose = 0x40000;  // EFI_MEMORY_SP
inline constexpr uint64_t kPageSize = 4096;                  // number_of_pages counts these

// One descriptor. The firmware's may be longer (descriptor_size, 48 on OVMF): walk by that stride.
struct MemoryDescriptor {
  uint32_t type;
  uint32_t pad;
  uint64_t physical_start;
  uint64_t virtual_start;
  uint64_t number_of_pages;
  uint64_t attribute;
};
static_assert(sizeof(MemoryDescriptor) == 40);

}  // namespace kpack::efi
