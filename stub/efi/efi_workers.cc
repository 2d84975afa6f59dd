#include "stub/efi/efi_workers.h"

#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/boot.h"
#include "stub/engine/command_line.h"
#include "stub/runtime/asm_symbols.h"

// Calls fn(a, b) on the stack that ends at `top`, then returns on the caller's. The firmware's AP
// stacks are small (EDK2's PcdCpuApStackSize: 32 KiB), so the decoders run on stacks from the
// engine's work area, as the legacy entries' APs do.
extern "C" void kpack_run_on_stack(void (*fn)(void*, uint32_t), void* a, uint32_t b, uint64_t top);
asm(R"(
  .text
  .globl kpack_run_on_stack
  .hidden kpack_run_on_stack
  .type kpack_run_on_stack, @function
kpack_run_on_stack:
  push %rbp
  mov %rsp, %rbp
  mov %rcx, %rsp
  mov %rdi, %rax
  mov %rsi, %rdi
  mov %edx, %esi
  call *%rax
  mov %rbp, %rsp
  pop %rbp
  ret
  .size kpack_run_on_stack, . - kpack_run_on_stack
)");

namespace kpack::efi {
namespace {

// The legacy helpers' stack (stub/smp/smp.h): what the deepest decoder needs, with room to spare.
constexpr uint64_t kApStackSize = 64 * 1024;
// The TSC counted at 5 GHz, as in stub/smp/smp.cc: a bound at least this long on any slower clock.
constexpr uint64_t kTscCyclesPerMicrosecond = 5000;
// The firmware resets an AP still running after this (an xz frame may take seconds under TCG);
// the boot CPU then redoes its frame. The boot CPU's own bound is twice that, in case the
// firmware's timer never signals the event.
constexpr uint64_t kApTimeoutMicroseconds = 10000000;
constexpr uint64_t kFinishMicroseconds = 2 * kApTimeoutMicroseconds;

constexpr uint32_t kPlainEvent = 0;

uint32_t load(const uint32_t& state) { return __atomic_load_n(&state, __ATOMIC_ACQUIRE); }

bool claim(uint32_t& state, uint32_t from, uint32_t to) {
  return __atomic_compare_exchange_n(&state, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

}  // namespace

FirmwareProcessors::FirmwareProcessors(const Firmware& fw, PhysicalMemory& memory, const char* command_line,
                                       uint64_t length)
    : fw_(fw), memory_(memory) {
  debug_ = command_line_has(command_line, length, "kpack.debug");
  stop_first_helper_ = command_line_has(command_line, length, "kpack.test_stopped_helper");
  constexpr uint64_t kMaxCpus = kMaxFrameWorkers + 1;
  uint64_t cpus = command_line_number(command_line, length, "kpack.cpus", kMaxCpus);
  max_cpus_ = static_cast<uint32_t>(cpus < 1 ? 1 : cpus < kMaxCpus ? cpus : kMaxCpus);
  if (max_cpus_ <= 1) return;
  void* interface = nullptr;
  Status status = fw.boot->locate_protocol(&kMpServicesProtocol, nullptr, &interface);
  uint64_t total = 0, enabled = 0;
  if (!failed(status) && interface)
    status = static_cast<MpServices*>(interface)->get_number_of_processors(static_cast<MpServices*>(interface), &total,
                                                                           &enabled);
  if (failed(status) || !interface) {
    problem_ = fail("SMP: no EFI MP services", status);
    max_cpus_ = 1;
    return;
  }
  mp_ = static_cast<MpServices*>(interface);
  found_ = static_cast<uint32_t>(total);
  if (enabled < max_cpus_) max_cpus_ = enabled ? static_cast<uint32_t>(enabled) : 1;
}

uint64_t FirmwareProcessors::memory_for(uint32_t count) const { return count * kApStackSize; }

uint32_t FirmwareProcessors::start(void (*work)(void*, uint32_t), void* arg, uint32_t count, Range memory) {
  if (!mp_ || count == 0) return 0;
  if (count > max_cpus_ - 1) count = max_cpus_ - 1;
  // The stacks are claimed from the firmware like every page the engine writes.
  if (!memory_.writable(memory.begin, memory_for(count))) {
    problem_ = fail("SMP: no stack memory", memory.begin);
    return 0;
  }
  work_ = work, arg_ = arg, stacks_ = memory, count_ = count;
  Status status = fw_.boot->create_event(kPlainEvent, 0, nullptr, nullptr, &done_event_);
  uint64_t begin = rdtsc();
  // With an event the call returns at once and the APs run alongside the boot CPU.
  if (!failed(status))
    status = mp_->startup_all_aps(mp_, &FirmwareProcessors::run_on_ap, false, done_event_, kApTimeoutMicroseconds, this,
                                  nullptr);
  start_cycles_ = rdtsc() - begin;
  // The engine runs with interrupts off (efi_entry.cc); the firmware turned them back on.
  asm volatile("cli" ::: "memory");
  if (failed(status)) {
    if (done_event_) fw_.boot->close_event(done_event_);
    done_event_ = nullptr, count_ = 0;
    problem_ = fail("SMP: StartupAllAPs failed", status);
    return 0;
  }
  started_ = count;
  return count;
}

// On each AP, with the firmware's GDT, IDT, page tables and stack: no boot services from here.
void KPACK_EFIAPI FirmwareProcessors::run_on_ap(void* self) {
  auto* aps = static_cast<FirmwareProcessors*>(self);
  // Before any library code: Debian's codec libraries read their canary at %fs:0x28, and FS_BASE
  // is per CPU (EDK2 does not use it). SSE and AVX stay as the firmware set them, as on the boot CPU.
  set_fs_base(stub_tls);
  uint32_t ticket = __atomic_fetch_add(&aps->tickets_, 1, __ATOMIC_ACQ_REL);
  // More enabled APs than kpack.cpus wants, or one the boot CPU has given up on: nothing to run.
  if (ticket >= aps->count_ || !claim(aps->slots_[ticket], kWaiting, kRunning)) return;
  uint64_t stack_top = aps->stacks_.begin + (ticket + 1) * kApStackSize;
  kpack_run_on_stack(&FirmwareProcessors::run_worker, aps, ticket + 1, stack_top);
  __atomic_store_n(&aps->slots_[ticket], kDone, __ATOMIC_RELEASE);
}

void FirmwareProcessors::run_worker(void* self, uint32_t index) {
  auto* aps = static_cast<FirmwareProcessors*>(self);
  __atomic_fetch_add(&aps->ran_, 1, __ATOMIC_RELAXED);
  aps->work_(aps->arg_, index);
}

// Waits until every worker has returned, or the firmware says all APs are done (it resets one that
// overran kApTimeoutMicroseconds first), or the boot CPU's own bound is over.
void FirmwareProcessors::finish() {
  if (!count_) return;
  // The firmware learns of finished and timed-out APs from its timer, which needs interrupts; our
  // own code keeps no red zone, so they may come while it polls.
  asm volatile("sti" ::: "memory");
  bool signaled = false;
  uint64_t deadline = rdtsc() + kFinishMicroseconds * kTscCyclesPerMicrosecond;
  for (;;) {
    signaled = fw_.boot->check_event(done_event_) == kSuccess;
    uint32_t done = 0;
    for (uint32_t i = 0; i < count_; ++i) done += load(slots_[i]) == kDone;
    if (signaled || done == count_ || rdtsc() > deadline) break;
    asm volatile("pause");
  }
  asm volatile("cli" ::: "memory");
  late_ = abandon_late_helpers();
  for (uint32_t i = 0; i < count_; ++i) returned_ += load(slots_[i]) == kDone;
  // An event the firmware has not signaled yet stays open: it signals it once its timer sees the
  // APs back, and must not find it freed.
  if (signaled) fw_.boot->close_event(done_event_);
  count_ = 0;
}

// APs that never took their slot must never run `work`: the engine redoes their share.
uint32_t FirmwareProcessors::abandon_late_helpers() {
  uint32_t abandoned = 0;
  for (uint32_t i = 0; i < count_; ++i) abandoned += claim(slots_[i], kWaiting, kAbandoned);
  return abandoned;
}

HelperCounts FirmwareProcessors::counts() const {
  return {found_, started_, __atomic_load_n(&ran_, __ATOMIC_RELAXED), returned_, late_, start_cycles_, problem_};
}

void FirmwareProcessors::print(const UnpackResult& result, const StubRecord& record) const {
  if (debug_) print_helper_counts(counts(), result, record);
}

}  // namespace kpack::efi
