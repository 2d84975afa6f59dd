// What every entry hands to the common boot path: the one structure the 16-bit setup (through the
// 32-bit entry), the 32- and 64-bit boot-protocol entries, the PVH entry and the two EFI entries
// fill, each from what its loader gave it. Nothing else crosses from an entry to the common path.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "formats/run_report.h"

namespace kpack {

// What an EFI entry keeps for the path after ExitBootServices: which entry it was, when it began,
// and the firmware's random bytes for KASLR.
struct FirmwareFacts {
  RunEntry entry = RunEntry::kEfiPe;
  uint64_t start_tsc = 0;
  uint32_t entropy_size = 0;
  uint8_t entropy[32] = {};  // EFI_RNG_PROTOCOL's bytes
};

struct Handover {
  boot::BootParams* params = nullptr;           // the kernel's boot_params: the loader's, or the entry's own
  uint8_t* image_base = nullptr;                // where the protected-mode part lies
  const PackerRecord* packer_record = nullptr;  // the packer's record, already checked by the entry
  RunEntry entry = RunEntry::kLegacy64;
  uint64_t start_tsc = 0;  // when the entry began, for kpack.debug and the run report
  // Entered as a UEFI application: free memory comes from the firmware's map alone, and the kernel
  // finds the ACPI tables through the EFI system table (no BIOS scans).
  bool efi_application = false;
  // Still under boot services (a confidential VM's EFI entry decodes before ExitBootServices): memory
  // is claimed from the firmware, one CPU decodes, and errors return to the firmware.
  bool boot_services_up = false;
  FirmwareFacts firmware;
};

}  // namespace kpack
