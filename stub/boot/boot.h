// What every entry does once it knows boot_params and the record: read the environment, draw
// KASLR, hand over what the stock decompressor hands over (loadflags' KASLR bit, the RSDP), and run
// the unpack engine. The legacy entries (main.cc) and the EFI entry (efi/) differ only in how
// they reach memory and what they do on an error.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "stub/machine/boot_environment.h"
#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "stub/base/physical_memory.h"
#include "stub/unpack/run_record.h"
#include "stub/base/status.h"
#include "stub/unpack/unpack.h"

namespace kpack {

struct BootOptions {
  uint64_t start_tsc = 0;                  // when the entry began, for kpack.debug
  bool bios_machine = true;                // look for the RSDP where a BIOS leaves it
  const uint8_t* extra_entropy = nullptr;  // e.g. EFI_RNG_PROTOCOL's bytes, mixed into KASLR's
  size_t extra_entropy_size = 0;
  const BootEnvironment* env = nullptr;  // read by the caller already; else unpack_for_boot reads it
  FrameWorkers* workers = nullptr;       // helpers that decode frames alongside (the legacy entries' APs)
  uint32_t max_workers = 0;
  RunRecord* run = nullptr;  // gets each phase as kpack.debug prints it
};

// What the EFI entries leave for the 64-bit entry they hand the boot to after ExitBootServices
// (efi/efi_entry.cc): who started the stub and when, and the firmware's random bytes for KASLR.
struct EfiHandoff {
  bool active = false;
  RunEntry entry = RunEntry::kEfiPe;
  uint64_t start_tsc = 0;
  uint32_t entropy_size = 0;
  uint8_t entropy[32] = {};
};
extern EfiHandoff efi_handoff;

// One line with kpack.debug: what was found and started, who decoded the frames, and which XXH3
// build proved them; then the problem, if any.
void print_helper_counts(const HelperCounts& counts, const UnpackResult& result, const StubRecord& record);

// Unpacks the kernel for `params`; on success the kernel's entry point is in result->entry.
StubStatus unpack_for_boot(boot::BootParams* params, uint8_t* image_base, const StubRecord& record,
                           PhysicalMemory& memory, const BootOptions& options, UnpackResult* result);

// The paging mode the kernel starts in: its startup_64 keeps the one it finds (CR4.LA57), so the
// stub picks what the stock decompressor would (wants_five_level_paging: the record, CPUID, no5lvl).
bool kernel_wants_five_levels(const StubRecord& record, const char* command_line, uint64_t length);
bool five_level_paging_on();
// Into the other paging mode, over the identity map that is live: `low_pages` are
// kLevelSwitchSize bytes below 4 GiB that hold nothing live. Loads the boot GDT.
StubStatus switch_paging_levels(bool five_levels, uint64_t low_pages);

// The command line read_boot_environment found, as the kpack.* option parsers take it: the text
// and its length without the NUL.
inline const char* command_line_text(const BootEnvironment& env) {
  return reinterpret_cast<const char*>(env.command_line.begin);
}
inline uint64_t command_line_length(const BootEnvironment& env) {
  return env.command_line.empty() ? 0 : env.command_line.size() - 1;
}

}  // namespace kpack
