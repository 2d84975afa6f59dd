// A confidential VM's platform: only the firmware's #VC and #VE handlers answer its CPUID and MSR
// accesses, so its kernel is decoded on the boot CPU, under boot services, into pages claimed
// from the firmware; then ExitBootServices, then the kernel. Until the firmware is left an error
// is shown on ConOut, every claimed page goes back, and the EFI entry returns it to the firmware.
#include "stub/boot/boot_kernel.h"
#include "stub/boot/boot_platform.h"
#include "stub/efi/efi_boot.h"

namespace kpack::efi {
namespace {

// The kernel's place is chosen in free memory as the firmware sees it now.
EfiStatus store_free_memory(const Firmware& fw, boot::BootParams* params) {
  MemoryMap now;
  EfiStatus status = read_memory_map(fw, 0, &now);
  if (failed(status)) return report(fw, "cannot read the memory map", status);
  memory_map_to_e820(now, true, params, nullptr, 0);
  fw.boot->free_pool(now.buffer());
  return kSuccess;
}

class FirmwarePlatform final : public BootPlatform {
 public:
  explicit FirmwarePlatform(const Firmware& fw) : fw_(fw), memory_(fw) {}

  // What the entry returns to the firmware after a failure.
  EfiStatus efi_status() const { return efi_status_; }

  PhysicalMemory& memory() override { return memory_; }
  // The e820 table store_free_memory wrote from the firmware's free memory.
  RamSource ram_source() const override { return RamSource::kE820; }

  // Debian's codec libraries are built for user space: their leaf functions keep data below the
  // stack pointer (the SysV red zone), which the firmware's timer interrupt would overwrite. So
  // the engine runs with interrupts off (FirmwareMemory turns them off again after each call into
  // the firmware, which turns them back on), on the boot CPU alone.
  FrameWorkers* start_decoding(const BootInputs&, const StubOptions&, const BootEnvironment&,
                               uint32_t* max_workers) override {
    asm volatile("cli" ::: "memory");
    *max_workers = 0;
    return nullptr;
  }
  HelperCounts end_decoding(const UnpackResult&, const StubOptions&) override { return {}; }

  // The whole span is the kernel's, gaps between segments included, before the firmware hands any
  // of it out; then its text made executable where the firmware maps free pages no-execute.
  StubStatus keep_kernel(const UnpackResult& result) override {
    bool claimed = memory_.claim(range_of(result.base, result.kernel.span()));
    asm volatile("sti" ::: "memory");
    if (!claimed) return kpack::fail("the firmware refused the kernel's pages", result.base, result.kernel.span());
    EfiStatus status = protect_kernel_text(fw_, result);
    if (!failed(status)) return StubStatus::success();
    numbers_ = StatusNumbers::kEfiStatus;
    return kpack::fail("cannot make the kernel's text executable", status);
  }

  bool low_pages(const BootInputs&, const BootEnvironment&, Range, uint64_t size, uint64_t* base) override {
    *base = allocate_pages(fw_, size, kBelow4G, kLoaderCode);
    return *base != 0;
  }

  // Loader data, which the kernel keeps as a setup_data node.
  uint8_t* run_report_page(const BootEnvironment&, Range, Range, uint64_t* address) override {
    *address = allocate_pages(fw_, kRunReportNodeSize, kBelow4G);
    return reinterpret_cast<uint8_t*>(*address);
  }

  StubStatus leave_firmware(const BootInputs& inputs) override {
    EfiStatus status = leave_boot_services(fw_, inputs);
    if (!failed(status)) {
      left_ = true;
      return StubStatus::success();
    }
    efi_status_ = status;  // leave_boot_services has shown why
    return kpack::fail("leaving boot services failed", status);
  }

  StubStatus fail(StubStatus status, const StubOptions& options) override {
    if (left_) stop_boot(status, options);
    asm volatile("sti" ::: "memory");
    memory_.release();
    if (!failed(efi_status_)) efi_status_ = report(fw_, status, numbers_);
    return status;
  }

 private:
  Firmware fw_;
  FirmwareMemory memory_;
  bool left_ = false;
  StatusNumbers numbers_ = StatusNumbers::kPair;
  EfiStatus efi_status_ = kSuccess;
};

}  // namespace

EfiStatus boot_before_exit(const Firmware& fw, const BootInputs& inputs) {
  EfiStatus status = store_free_memory(fw, inputs.params);
  if (failed(status)) return status;
  FirmwarePlatform platform(fw);
  // Returns only a failure, which the platform has shown.
  (void)boot_kernel(inputs, platform);
  return platform.efi_status();
}

}  // namespace kpack::efi
