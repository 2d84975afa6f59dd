// What every entry does once it knows boot_params and the record (the Handover): draw KASLR, hand
// over what the stock decompressor hands over (loadflags' KASLR bit, the RSDP), and run the unpack
// engine. The path after the firmware (stub_main.cc) and a confidential VM's EFI entry, still under
// boot services (efi/efi_entry.cc), differ only in how they reach memory and what they do on an error.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "stub/base/physical_memory.h"
#include "stub/boot/handover.h"
#include "stub/machine/boot_environment.h"
#include "stub/options/stub_options.h"
#include "stub/unpack/run_report.h"
#include "stub/base/status.h"
#include "stub/unpack/unpack.h"

namespace kpack {

// What unpack_for_boot works with besides the hand-over: memory as the caller reaches it, the
// environment it read from boot_params, the CPUs that help decode, and the run report to fill.
struct BootResources {
  PhysicalMemory* memory = nullptr;
  const BootEnvironment* env = nullptr;
  FrameWorkers* workers = nullptr;  // the application processors, on the path after the firmware
  uint32_t max_workers = 0;
  RunReport* run = nullptr;  // gets each phase as kpack.debug prints it
};

// One line with kpack.debug: what was found and started, who decoded the frames, and which XXH3
// build proved them; then the problem, if any.
void print_helper_counts(const HelperCounts& counts, const UnpackResult& result, const PackerRecord& record);

// Stops a boot that failed once the options are known: the error line on COM1, then a halt, or with
// panic=N (N > 0) a reset after N seconds, so that an unattended machine reaches its boot loader's
// fallback (a trial boot's stock kernel). panic=0 and panic=-1 halt, as every boot did before.
[[noreturn]] void stop_boot(StubStatus status, const StubOptions& options);

// Unpacks the kernel the hand-over describes; on success the kernel's entry point is in result->entry.
StubStatus unpack_for_boot(const Handover& handover, const StubOptions& options, const BootResources& resources,
                           UnpackResult* result);

// The paging mode the kernel starts in: its startup_64 keeps the one it finds (CR4.LA57), so the
// stub picks what the stock decompressor would (wants_five_level_paging: the record, CPUID, no5lvl).
bool kernel_wants_five_levels(const PackerRecord& record, const StubOptions& options);
bool five_level_paging_on();
// Into the other paging mode, over the identity map that is live: `low_pages` are
// kLevelSwitchSize bytes below 4 GiB that hold nothing live. Loads the boot GDT.
StubStatus switch_paging_levels(bool five_levels, uint64_t low_pages);

// The options on the command line read_boot_environment found.
inline StubOptions read_stub_options(const BootEnvironment& env) {
  return parse_stub_options(reinterpret_cast<const char*>(env.command_line.begin),
                            env.command_line.empty() ? 0 : env.command_line.size() - 1);
}

}  // namespace kpack
