// What the one boot path (boot_kernel.h) asks of the machine it runs on. Two platforms answer:
// bare metal (bare_metal.cc: after every boot-protocol entry and after the EFI entries have left
// boot services: the stub's identity map, the application processors as helpers, errors halt or
// reset), and the firmware (efi/firmware_platform.cc: a confidential VM's EFI entry, still under
// boot services: memory claimed from the firmware, the boot CPU alone, errors return to the
// firmware until it is left).
#pragma once

#include <stdint.h>

#include "stub/base/physical_memory.h"
#include "stub/base/range.h"
#include "stub/base/status.h"
#include "stub/entry/boot_inputs.h"
#include "stub/machine/boot_environment.h"
#include "stub/options/stub_options.h"
#include "stub/unpack/frame_workers.h"
#include "stub/unpack/run_report.h"
#include "stub/unpack/unpack.h"

namespace kpack {

class BootPlatform {
 public:
  // Physical memory as this platform reaches it, and where its free RAM is read from.
  virtual PhysicalMemory& memory() = 0;
  virtual RamSource ram_source() const = 0;

  // Just before the kernel is decoded: the CPUs that help (started now; nullptr for the boot CPU
  // alone) and how many may. After it, whatever came of it: every helper stopped, and what each did.
  virtual FrameWorkers* start_decoding(const BootInputs& inputs, const StubOptions& options, const BootEnvironment& env,
                                       uint32_t* max_workers) = 0;
  virtual HelperCounts end_decoding(const UnpackResult& result, const StubOptions& options) = 0;

  // The decoded kernel made the kernel's: its pages (gaps between segments included) and its text
  // executable, where the platform hands memory out.
  virtual StubStatus keep_kernel(const UnpackResult& result) = 0;

  // `size` bytes of whole pages below 4 GiB that hold nothing live and stay clear of `image`: where
  // the switch between 4- and 5-level paging runs. False when there are none.
  virtual bool low_pages(const BootInputs& inputs, const BootEnvironment& env, Range image, uint64_t size,
                         uint64_t* base) = 0;
  // The page of the run report's setup_data node, off the kernel and the image; nullptr when there
  // is none (the boot goes on without a report).
  virtual uint8_t* run_report_page(const BootEnvironment& env, Range kernel, Range image, uint64_t* address) = 0;

  // Leaves the firmware for good, when there is one to leave (ExitBootServices).
  virtual StubStatus leave_firmware(const BootInputs& inputs) = 0;

  // A boot that failed: bare metal (and the firmware once left) prints the line on COM1 and halts,
  // or with panic=N resets; before the firmware is left, the line goes to its console, what was
  // claimed goes back, and the status returns to the firmware.
  virtual StubStatus fail(StubStatus status, const StubOptions& options) = 0;

 protected:
  ~BootPlatform() = default;
};

}  // namespace kpack
