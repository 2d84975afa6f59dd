#include "stub/smp/smp.h"

#include "stub/machine/acpi_madt.h"
#include "stub/smp/ap_boot.h"
#include "stub/runtime/asm_symbols.h"
#include "stub/boot/boot.h"
#include "stub/arch/cpu.h"
#include "stub/entry/exceptions.h"
#include "stub/smp/local_apic.h"
#include "stub/machine/trampoline_page.h"
#include "stub/arch/vector_registers.h"

namespace kpack::smp {
namespace {

// Time by the TSC, whose frequency the stub does not know: a delay the specifications ask for
// assumes a 5 GHz TSC, so it lasts at least that long on any slower clock; a timeout, likewise
// counted at 5 GHz, is then at most 5x longer on a 1 GHz clock: bounded either way.
constexpr uint64_t kTscCyclesPerMicrosecond = 5000;
// MP specification 1.4, B.4: 10 ms between asserting and deasserting INIT, 200 us between the
// START IPIs. On CPUs that need no INIT delay (smp_quirk_init_udelay) Linux drops the first and
// waits 2 x 10 us between the START IPIs (wakeup_secondary_cpu_via_init); so do we. The boot CPU
// decodes only after the second: at 200 us it lost 1 M cycles of a 100 M decode on two CPUs.
constexpr uint64_t kInitDelayMicroseconds = 10000, kStartupDelayMicroseconds = 200;
constexpr uint64_t kModernStartupDelayMicroseconds = 20;
// How long the APs have, from the first INIT, to reach ap_entry; QEMU's TCG needs a few ms per AP
// for the trampoline, and 5-25 ms under host load. The boot CPU decodes meanwhile: it waits for a
// check-in only once it has run out of frames, and so only for an AP slower than the whole decode.
constexpr uint64_t kCheckInMicroseconds = 200000;
// How long the APs have to finish their work: an AP decoding a large frame under emulation (xz
// keeps whole regions: the generic kernel's 15 MB of code takes seconds under TCG) must not be
// stopped; only a hung AP waits this out, and the boot CPU then decodes its frame again.
constexpr uint64_t kParkMicroseconds = 10000000;

enum SlotState : uint32_t { kWaiting, kRunning, kDone, kAbandoned };

// One per AP sent a START IPI, in the caller's helper memory.
struct ApSlot {
  uint32_t apic_id;
  uint32_t cpu_index;
  uint32_t state;  // kWaiting -> kRunning (the AP) or kAbandoned (the boot CPU), exactly once
  uint32_t reserved;
  uint64_t checked_in_at;  // the AP's TSC as it claims kRunning (published by that exchange)
};

struct Helpers {
  LocalApic apic;
  ApSlot* slots = nullptr;
  uint32_t count = 0;
  HelperWork work = nullptr;
  void* arg = nullptr;
  uint64_t started_at = 0;         // TSC at the first INIT
  uint64_t check_in_deadline = 0;  // TSC after which an AP that has not checked in is abandoned
};
Helpers helpers;

void delay(uint64_t microseconds) {
  uint64_t end = rdtsc() + microseconds * kTscCyclesPerMicrosecond;
  while (rdtsc() < end) asm volatile("pause");
}

uint64_t deadline_after(uint64_t microseconds) { return rdtsc() + microseconds * kTscCyclesPerMicrosecond; }

uint32_t state_of(const ApSlot& slot) { return __atomic_load_n(&slot.state, __ATOMIC_ACQUIRE); }

bool claim(ApSlot& slot, uint32_t to) {
  uint32_t expected = kWaiting;
  return __atomic_compare_exchange_n(&slot.state, &expected, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

// Where every AP arrives from the trampoline, on its own stack.
[[noreturn]] void ap_entry(uint32_t /*ticket*/) {
  // Before any library code: Debian's codec libraries read their canary at %fs:0x28.
  set_fs_base(stub_tls);
  // A fault on an AP is reported like one on the boot CPU.
  load_exception_handlers();
  // XCR0 is per CPU; xxh3_64 checks it on the CPU it runs on.
  enable_avx_registers();
  uint32_t id = current_apic_id();
  for (uint32_t i = 0; i < helpers.count; ++i) {
    ApSlot& slot = helpers.slots[i];
    if (slot.apic_id != id) continue;
    // Checking in; one the boot CPU has given up on must not run anything.
    slot.checked_in_at = rdtsc();
    if (claim(slot, kRunning)) {
      helpers.work(helpers.arg, slot.cpu_index);
      __atomic_store_n(&slot.state, kDone, __ATOMIC_RELEASE);
    }
    break;
  }
  halt();  // until the boot CPU's INIT
}

// Linux's rule (smp_quirk_init_udelay): Intel family 6 and later, AMD from family 0xF and Hygon
// from 0x18 need no delay between INIT's assert and deassert. CPUID 0's EBX tells the vendors apart.
bool needs_init_delay() {
  uint32_t vendor = cpuid(0).ebx;
  uint32_t signature = cpuid(1).eax;
  uint32_t family = (signature >> 8) & 0xF;
  if (family == 0xF) family += (signature >> 20) & 0xFF;
  uint32_t modern = vendor == 0x756E6547 ? 6 : vendor == 0x68747541 ? 0xF : vendor == 0x6F677948 ? 0x18 : ~0u;
  return family < modern;  // "Genu"ineIntel, "Auth"enticAMD, "Hygo"nGenuine
}

uint32_t helpers_that_fit(uint64_t bytes) {
  uint32_t n = 0;
  while (n < kMaxCpus && helper_memory_size(n + 1) <= bytes) ++n;
  return n;
}

uint64_t slot_table_size(uint32_t helpers) { return align_up(uint64_t{helpers} * sizeof(ApSlot), 4096); }

void init(uint32_t apic_id) {
  helpers.apic.send_init_assert(apic_id);
  helpers.apic.send_init_deassert(apic_id);
}

// Copies the trampoline to `page` and fills its data block.
bool prepare_trampoline(PhysicalMemory& memory, uint64_t page, Range stacks, uint32_t count, bool broken) {
  uint64_t code_size = ap_trampoline_end - ap_trampoline_start;
  if (code_size > kApBootDataOffset) return false;
  uint8_t* bytes = memory.writable(page, 4096);
  if (!bytes) return false;
  __builtin_memcpy(bytes, ap_trampoline_start, code_size);
  ApBootData data{};
  for (int i = 0; i < 4; ++i) data.gdt[i] = kApGdt[i];
  data.gdt_limit = sizeof(data.gdt) - 1;
  data.gdt_base = static_cast<uint32_t>(page + kApBootDataOffset + __builtin_offsetof(ApBootData, gdt));
  data.to_code32 = {static_cast<uint32_t>(page + (ap_trampoline_code32 - ap_trampoline_start)), kApCode32Selector};
  data.to_code64 = {static_cast<uint32_t>(page + (ap_trampoline_code64 - ap_trampoline_start)),
                    boot::kBootCodeSelector};
  uint64_t cr3;
  asm volatile("mov %%cr3, %0" : "=r"(cr3));
  data.cr0 = kApCr0Long;
  data.cr3 = static_cast<uint32_t>(cr3);
  data.cr4 = kApCr4;
  data.efer = kEferLme | (static_cast<uint32_t>(read_msr(kMsrEfer)) & kEferNxe);
  data.stacks = broken ? 0 : count;
  data.stack_base = stacks.begin;
  data.stack_size = kHelperStackSize;
  data.entry = reinterpret_cast<uint64_t>(&ap_entry);
  __builtin_memcpy(bytes + kApBootDataOffset, &data, sizeof(data));
  return true;
}

// Spins until no started AP's slot is in `state` any more, or the TSC has passed `deadline`.
void wait_while_any_in(uint32_t state, uint64_t deadline) {
  for (;;) {
    uint32_t in_state = 0;
    for (uint32_t i = 0; i < helpers.count; ++i) in_state += state_of(helpers.slots[i]) == state;
    if (!in_state || rdtsc() > deadline) break;
    asm volatile("pause");
  }
}

// Whether this CPU can start the others, and the page below 1 MiB where they come up in real mode
// and reach long mode through a 32-bit CR3.
StubStatus find_startup_page(const HelperRequest& request, const CpuList& cpus, uint64_t* page) {
  uint32_t self = current_apic_id();
  uint64_t cr3;
  asm volatile("mov %%cr3, %0" : "=r"(cr3));
  if (cpu_index_of(cpus, self) < 0) return fail("SMP: boot CPU not listed (APIC ID)", self);
  if (!helpers.apic.open()) return fail("SMP: no local APIC");
  if (cr3 >> 32) return fail("SMP: CR3 above 4 GiB", cr3);
  if (!find_trampoline_page(*request.params, request.params_addr, *request.env, request.image, page))
    return fail("SMP: no page below 1 MiB");
  return StubStatus::success();
}

// The APs the firmware lists besides this CPU, as many as kpack.cpus allows and the helper memory holds.
uint32_t helpers_wanted(const HelperRequest& request, const CpuList& cpus) {
  uint32_t count = cpus.count - 1;
  if (count > request.max_cpus - 1) count = request.max_cpus - 1;
  uint32_t fit = helpers_that_fit(request.helper_memory.size());
  return count < fit ? count : fit;
}

// A slot for each of those APs, in the firmware's order, at the start of the helper memory.
ApSlot* write_slots(const HelperRequest& request, const CpuList& cpus, uint32_t count) {
  auto* slots =
      reinterpret_cast<ApSlot*>(request.memory->writable(request.helper_memory.begin, helper_memory_size(count)));
  if (!slots) return nullptr;
  uint32_t self = current_apic_id();
  for (uint32_t i = 0, n = 0; i < cpus.count && n < count; ++i)
    if (cpus.apic_id[i] != self) slots[n] = ApSlot{cpus.apic_id[i], n + 1, kWaiting, 0, 0}, ++n;
  return slots;
}

// The slots, then the stacks and the trampoline, all written before any AP can look at them.
StubStatus prepare_helpers(const HelperRequest& request, const CpuList& cpus, uint64_t page) {
  uint32_t count = helpers_wanted(request, cpus);
  if (count == 0) return fail("SMP: no stack memory", request.helper_memory.size());
  ApSlot* slots = write_slots(request, cpus, count);
  if (!slots) return fail("SMP: no stack memory", request.helper_memory.begin);
  Range stacks{request.helper_memory.begin + slot_table_size(count),
               request.helper_memory.begin + helper_memory_size(count)};
  if (!prepare_trampoline(*request.memory, page, stacks, count, request.break_trampoline))
    return fail("SMP: no page below 1 MiB", page);
  helpers.slots = slots;
  helpers.count = count;
  helpers.work = request.work;
  helpers.arg = request.arg;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return StubStatus::success();
}

// INIT-SIPI-SIPI to every AP at once (Intel SDM vol. 3, 9.4.4.1), so they boot in parallel.
void send_init_and_startup(uint64_t page) {
  auto vector = static_cast<uint8_t>(page >> 12);
  bool old_cpu = needs_init_delay();
  for (uint32_t i = 0; i < helpers.count; ++i) helpers.apic.send_init_assert(helpers.slots[i].apic_id);
  if (old_cpu) delay(kInitDelayMicroseconds);
  for (uint32_t i = 0; i < helpers.count; ++i) helpers.apic.send_init_deassert(helpers.slots[i].apic_id);
  for (uint32_t i = 0; i < helpers.count; ++i) helpers.apic.send_startup(helpers.slots[i].apic_id, vector);
  delay(old_cpu ? kStartupDelayMicroseconds : kModernStartupDelayMicroseconds);
  // The second START IPI, for an AP that missed the first (one already running ignores it).
  for (uint32_t i = 0; i < helpers.count; ++i)
    if (state_of(helpers.slots[i]) == kWaiting) helpers.apic.send_startup(helpers.slots[i].apic_id, vector);
}

// Too late: such an AP must never run `work`, and INIT stops it wherever it is. Returns how many.
uint32_t abandon_late_helpers() {
  uint32_t abandoned = 0;
  for (uint32_t i = 0; i < helpers.count; ++i) {
    if (claim(helpers.slots[i], kAbandoned)) {
      ++abandoned;
      init(helpers.slots[i].apic_id);
    }
  }
  return abandoned;
}

}  // namespace

uint64_t helper_memory_size(uint32_t count) { return slot_table_size(count) + count * kHelperStackSize; }

uint32_t start_helpers(const HelperRequest& request, HelperReport* report) {
  *report = HelperReport{};
  helpers.count = 0;
  if (request.max_cpus <= 1) return 0;
  // A machine with one CPU has nobody to start, which is no problem.
  CpuList cpus;
  report->problem = find_cpus(*request.memory, request.rsdp, &cpus);
  if (!report->problem.ok()) return 0;
  report->found = cpus.count;
  if (cpus.count < 2) return 0;
  // Everything an AP reads is in place before the first INIT.
  uint64_t page = 0;
  report->problem = find_startup_page(request, cpus, &page);
  if (report->problem.ok()) report->problem = prepare_helpers(request, cpus, page);
  if (!report->problem.ok()) return 0;
  helpers.apic.enable();
  helpers.started_at = rdtsc();
  helpers.check_in_deadline = deadline_after(kCheckInMicroseconds);
  send_init_and_startup(page);
  // No wait for the check-ins: the caller decodes at once, and each AP joins when it arrives.
  return helpers.count;
}

uint32_t park_helpers(HelperReport* report) {
  if (!helpers.count) return 0;
  // An AP that never checks in must not hold up the boot: the wait is bounded, from the first INIT.
  wait_while_any_in(kWaiting, helpers.check_in_deadline);
  report->abandoned = abandon_late_helpers();
  report->started = helpers.count - report->abandoned;
  uint64_t last_check_in = helpers.started_at;
  for (uint32_t i = 0; i < helpers.count; ++i)
    if (state_of(helpers.slots[i]) != kAbandoned && helpers.slots[i].checked_in_at > last_check_in)
      last_check_in = helpers.slots[i].checked_in_at;
  report->start_cycles = last_check_in - helpers.started_at;
  wait_while_any_in(kRunning, deadline_after(kParkMicroseconds));
  uint32_t ran = 0;
  // Wait-for-SIPI, as after firmware: the kernel starts the APs with its own INIT-SIPI-SIPI, and
  // an AP halted in our trampoline could wake (NMI, SMI) into a page the kernel has reused.
  for (uint32_t i = 0; i < helpers.count; ++i) {
    ran += state_of(helpers.slots[i]) == kDone;
    init(helpers.slots[i].apic_id);
  }
  helpers.apic.close();
  helpers.count = 0;
  return ran;
}

}  // namespace kpack::smp
