// What the loader handed over, turned into physical ranges: usable RAM from the e820 map (or, on a
// UEFI machine entered through the boot protocol, the EFI memory map's free memory), and the live data the stub must not overwrite (boot_params, the command line, setup_data, the initrd).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "stub/options/command_line.h"  // the stub asks the command line read here for its options
#include "stub/machine/free_memory.h"
#include "stub/options/kaslr_options.h"
#include "stub/base/physical_memory.h"
#include "stub/base/status.h"

namespace kpack {

inline constexpr uint32_t kMaxSetupDataNodes = 256;
inline constexpr uint64_t kLowestUsable = 0x100000;  // below 1 MiB live BIOS data, the setup code and its stack
// The loader's data below 1 MiB recorded for the low pages' search (trampoline_page.h).
inline constexpr uint32_t kMaxLowLoaderData = 16;

enum class RamSource : uint8_t {
  kE820,               // the e820 map only (the EFI entry wrote it from the firmware's free memory)
  kEfiMapWhenPresent,  // efi_info's memory map when it has one, as the stock decompressor does
  kEfiMapOnly          // efi_info's memory map as the EFI entries left it at their ExitBootServices:
                       // the firmware loaded the image at its PE size, so no init_size is added
};

struct BootEnvironment {
  FreeMemory free;                 // usable RAM from 1 MiB up to 64 TiB (MAXMEM), minus the live ranges
  bool free_from_efi_map = false;  // free came from efi_info's memory map, not e820
  Range command_line;              // empty when there is none
  Range initrd;                    // empty when there is none
  Range rng_seed;                  // the SETUP_RNG_SEED node's bytes; empty when there is none
  uint32_t setup_data_nodes = 0;
  // The setup_data nodes, SETUP_INDIRECT targets and the EFI memory map that begin below 1 MiB,
  // which free (from 1 MiB up) cannot show: the low pages keep off them. More than the array
  // holds: low_loader_data_overflow, and no low page is taken.
  Range low_loader_data[kMaxLowLoaderData];
  uint32_t low_loader_data_count = 0;
  bool low_loader_data_overflow = false;
  // What the command line keeps from the kernel, once the stub has read it (boot_kernel), which its
  // low pages keep clear of too (free has it removed already).
  const KaslrOptions* command_line_memory = nullptr;
};

// `boot_params_addr` is the physical address of `params`. With the EFI map, `image_base` is where the
// loader put the image: the init_size bytes it reserved there (loader data in that map) are the kernel's.
StubStatus read_boot_environment(const boot::BootParams& params, uint64_t boot_params_addr, PhysicalMemory& memory,
                                 BootEnvironment* out, RamSource source = RamSource::kE820, uint64_t image_base = 0);

}  // namespace kpack
