// What every entry hands to the one boot path (stub/boot/boot_kernel.h): the 16-bit setup (through
// the 32-bit entry), the 32- and 64-bit boot-protocol entries, the PVH entry and the two EFI entries
// each fill it from what their loader gave them. Nothing else crosses from an entry to the kernel.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "formats/run_report.h"
#include "stub/options/stub_options.h"

namespace kpack {

struct BootInputs {
  boot::BootParams* params = nullptr;           // the kernel's boot_params: the loader's, or the entry's own
  uint8_t* image_base = nullptr;                // where the protected-mode part lies
  const PackerRecord* packer_record = nullptr;  // the packer's record, checked by the entry
  RunEntry entry = RunEntry::kLegacy64;
  uint64_t start_tsc = 0;  // when the entry began, for kpack.debug and the run report
  // Entered as a UEFI application: free memory comes from the firmware's map alone, and the kernel
  // finds the ACPI tables through the EFI system table (no BIOS scans).
  bool efi_application = false;
  // The stub's options, when the entry needed them before the boot path (the EFI entries): the
  // command line is parsed once per boot.
  bool options_read = false;
  StubOptions options;
  uint32_t entropy_size = 0;
  uint8_t entropy[32] = {};  // EFI_RNG_PROTOCOL's bytes, for KASLR
  // How often this boot checked the record and applied the stub's relocations: 1 each on every
  // entry (kpack.debug prints both; the boot tests hold them to it).
  uint32_t record_checks = 0;
  uint32_t relocation_passes = 0;
};

}  // namespace kpack
