// The EFI entry's frame workers: the application processors the firmware already runs, lent to
// the unpack engine through EFI_MP_SERVICES_PROTOCOL (PI specification, vol. 2, 13.4) while boot
// services are up. Trouble (no protocol, an AP that fails or never returns) leaves the frames to
// the boot CPU, with a reason for kpack.debug; it never stops the boot.
#pragma once

#include <stdint.h>

#include "stub/efi/efi_boot.h"
#include "stub/engine/frame_workers.h"
#include "stub/engine/run_record.h"
#include "stub/engine/status.h"
#include "stub/engine/stub_record.h"
#include "stub/engine/unpack.h"

namespace kpack::efi {

// EDK2 MdePkg/Include/Protocol/MpService.h; members in the specification's order.
inline constexpr Guid kMpServicesProtocol = {
    0x3FDDA605, 0xA76E, 0x4F46, {0xAD, 0x29, 0x12, 0xF4, 0x53, 0x1B, 0x3D, 0x08}};
struct MpServices {
  using Procedure = void(KPACK_EFIAPI*)(void* argument);
  Status(KPACK_EFIAPI* get_number_of_processors)(MpServices* self, uint64_t* total, uint64_t* enabled);
  void* get_processor_info;
  Status(KPACK_EFIAPI* startup_all_aps)(MpServices* self, Procedure procedure, bool single_thread, void* wait_event,
                                        uint64_t timeout_microseconds, void* argument, uint64_t** failed_cpus);
  void* startup_this_ap;
  void* switch_bsp;
  void* enable_disable_ap;
  void* who_am_i;
};

class FirmwareProcessors final : public FrameWorkers {
 public:
  // Finds the protocol and the enabled processors; `command_line` gives kpack.cpus and the test hook.
  FirmwareProcessors(const Firmware& fw, PhysicalMemory& memory, const char* command_line, uint64_t length);

  uint32_t max_helpers() const { return max_cpus_ - 1; }
  uint64_t memory_for(uint32_t count) const override;
  uint32_t start(void (*work)(void*, uint32_t), void* arg, uint32_t count, Range memory) override;
  void finish() override;

  // kpack.test_stopped_helper: the first AP stays inside its first item until the firmware's
  // timeout resets it, as a CPU that never returns would.
  bool holds(uint32_t index) const override { return stop_first_helper_ && index == 1; }
  void hold(uint32_t) override {
    for (;;) asm volatile("pause");
  }

  HelperCounts counts() const;
  // With kpack.debug, the legacy entries' line: what was found and started, who decoded the frames.
  void print(const UnpackResult& result, const StubRecord& record) const;

 private:
  enum SlotState : uint32_t { kWaiting, kRunning, kDone, kAbandoned };
  static void KPACK_EFIAPI run_on_ap(void* self);
  static void run_worker(void* self, uint32_t index);
  uint32_t abandon_late_helpers();

  Firmware fw_;
  PhysicalMemory& memory_;
  MpServices* mp_ = nullptr;
  StubStatus problem_ = StubStatus::success();
  uint32_t found_ = 0;
  uint32_t max_cpus_ = 1;
  bool debug_ = false;
  bool stop_first_helper_ = false;
  void* done_event_ = nullptr;
  void (*work_)(void*, uint32_t) = nullptr;
  void* arg_ = nullptr;
  Range stacks_;
  uint32_t count_ = 0;    // workers start() promised; slot i + 1 is worker i + 1's
  uint32_t tickets_ = 0;  // APs that have asked for a worker index
  uint32_t slots_[kMaxFrameWorkers] = {};
  uint32_t started_ = 0, ran_ = 0, returned_ = 0, late_ = 0;
  uint64_t start_cycles_ = 0;
};

}  // namespace kpack::efi
