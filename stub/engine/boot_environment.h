// What the loader handed over, turned into physical ranges: usable RAM from the e820 map, and the
// live data the stub must not overwrite (boot_params, the command line, setup_data, the initrd).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "stub/engine/free_memory.h"
#include "stub/engine/kaslr.h"
#include "stub/engine/physical_memory.h"
#include "stub/engine/status.h"

namespace kpack {

inline constexpr uint32_t kMaxSetupDataNodes = 256;
inline constexpr uint64_t kLowestUsable = 0x100000;  // below 1 MiB live BIOS data, the setup code and its stack

struct BootEnvironment {
  FreeMemory free;          // usable RAM from 1 MiB up to 64 TiB (MAXMEM), minus the live ranges
  Range command_line;       // empty when there is none
  Range initrd;             // empty when there is none
  Range rng_seed;           // the SETUP_RNG_SEED node's bytes; empty when there is none
  uint32_t setup_data_nodes = 0;
};

// `boot_params_addr` is the physical address of `params`.
StubStatus read_boot_environment(const boot::BootParams& params, uint64_t boot_params_addr,
                                 PhysicalMemory& memory, BootEnvironment* out);

// True when the command line holds `word` as a whole space-separated token.
bool command_line_has(const char* command_line, uint64_t length, const char* word);

// The decimal N of the last `key=N` token (e.g. kpack.cpus=4); `fallback` when there is none or
// N is not a plain decimal number.
uint64_t command_line_number(const char* command_line, uint64_t length, const char* key, uint64_t fallback);

}  // namespace kpack
