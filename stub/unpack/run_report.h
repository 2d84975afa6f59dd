// The run report (formats/run_report.h) put together as the boot goes: the phases as the trace
// reports them, then what the engine and the helpers did, then a page for it in free memory and its
// place at the head of boot_params' setup_data list. Pure, so the host tests build it byte for byte.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "formats/run_report.h"
#include "stub/machine/free_memory.h"
#include "stub/base/range.h"
#include "stub/base/status.h"
#include "stub/unpack/unpack.h"

namespace kpack {

// What the helpers of either kind did (kpack.debug's cpus line).
struct HelperCounts {
  uint64_t found, started, ran, returned, late, join_cycles;
  StubStatus problem;  // why only one CPU decoded, if one did
};

// The node's bytes: the setup_data header the kernel reads, then the report.
inline constexpr uint64_t kRunReportNodeSize = sizeof(boot::SetupData) + sizeof(RunReport);

RunReport start_run_report(Codec codec, RunEntry entry, uint64_t start_tsc);

// One phase as kpack.debug names it; a name outside kRunPhaseNames or a ninth phase is left out.
void report_phase(RunReport& run, const char* name, uint64_t bytes, uint64_t cycles);

// Where the kernel went and who decoded its frames.
void report_result(RunReport& run, const UnpackResult& result, const HelperCounts& helpers);

// A page for the node in `free` at or above 1 MiB (the kernel keeps the low MiB for itself), off
// the kernel's span and the loaded image, both of which the kernel reuses.
bool place_run_report(const FreeMemory& free, Range kernel, Range image, uint64_t* address);

// Writes the node to `node` (physical `address`) and makes it the head of the setup_data list, the
// rest behind it. Returns the report's copy in the node, for the TSC at the kernel's entry.
RunReport* link_run_report(boot::BootParams& params, uint64_t address, uint8_t* node, const RunReport& run);

}  // namespace kpack
