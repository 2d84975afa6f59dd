#include "stub/smp/smp.h"

#include "stub/machine/acpi_madt.h"
#include "stub/smp/ap_boot.h"
#include "stub/runtime/stack_protector.h"
#include "stub/smp/ap_trampoline.h"
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
// waits 2 x 10 us between the START IPIs (wakeup_secondary_cpu_via_init); so do we: the boot CPU
// waits out both (the specification's 200 us was a visible part of a 2-CPU decode: doc/benchmark-history.md, "Figures the code rests on").
constexpr uint64_t kInitDelayMicroseconds = 10000, kStartupDelayMicroseconds = 200;
constexpr uint64_t kModernStartupDelayMicroseconds = 20;
// How long the APs have, from the first INIT, to reach ap_entry: QEMU's TCG needs milliseconds per
// AP for the trampoline, more under host load. The boot CPU works meanwhile: it waits for a
// check-in only once it has run out of frames, and so only for an AP slower than all of that.
constexpr uint64_t kCheckInMicroseconds = 200000;
// How long the APs have to finish their work: an AP decoding a large frame under emulation (xz
// keeps whole regions: a generic kernel's code takes seconds under TCG) must not be
// stopped; only a hung AP waits this out, and the boot CPU then decodes its frame again.
constexpr uint64_t kParkMicroseconds = 10000000;

enum SlotState : uint32_t { kWaiting, kRunning, kDone, kAbandoned };

// One per stack start_helpers hands out, in the helper memory: the AP that takes stack n (its
// ticket, in arrival order) checks in at slot n.
struct ApSlot {
  uint32_t state;  // kWaiting -> kRunning (the AP) or kAbandoned (the boot CPU), exactly once
  uint32_t reserved;
  uint64_t checked_in_at;  // the AP's TSC as it claims kRunning (published by that exchange)
};

struct Helpers {
  LocalApic apic;
  uint32_t woken_ids[kMaxCpus] = {};  // the APs sent START, by APIC ID
  uint32_t woken = 0;
  ApBootData* boot_data = nullptr;  // in the trampoline's page
  bool break_trampoline = false;
  ApSlot* slots = nullptr;
  uint32_t count = 0;  // stacks handed out
  HelperWork work = nullptr;
  void* arg = nullptr;
  uint64_t check_in_deadline = 0;  // TSC after which an AP that has not checked in is abandoned
  uint64_t started_at = 0;         // TSC as the stacks were handed out
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

// Where every AP arrives from the trampoline, on stack `ticket` (below the number handed out).
[[noreturn]] void ap_entry(uint32_t ticket) {
  // Before any library code: Debian's codec libraries read their canary at %fs:0x28.
  set_fs_base(stub_tls);
  // A fault on an AP is reported like one on the boot CPU.
  load_exception_handlers();
  // XCR0 is per CPU; xxh3_64 checks it on the CPU it runs on.
  enable_avx_registers();
  ApSlot& slot = helpers.slots[ticket];
  // Checking in; one the boot CPU has given up on must not run anything.
  slot.checked_in_at = rdtsc();
  if (claim(slot, kRunning)) {
    helpers.work(helpers.arg, ticket + 1);
    __atomic_store_n(&slot.state, kDone, __ATOMIC_RELEASE);
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

// Copies the trampoline to `page` and fills its data block; the APs wait there for their stacks.
ApBootData* prepare_trampoline(PhysicalMemory& memory, uint64_t page) {
  uint64_t code_size = ap_trampoline_end - ap_trampoline_start;
  if (code_size > kApBootDataOffset) return nullptr;
  uint8_t* bytes = memory.writable(page, 4096);
  if (!bytes) return nullptr;
  __builtin_memcpy(bytes, ap_trampoline_start, code_size);
  ApBootData data{};
  for (int i = 0; i < 4; ++i) data.gdt[i] = kApGdt[i];
  data.gdt_limit = sizeof(data.gdt) - 1;
  data.gdt_base = static_cast<uint32_t>(page + kApBootDataOffset + __builtin_offsetof(ApBootData, gdt));
  data.to_code32 = {static_cast<uint32_t>(page + (ap_trampoline_code32 - ap_trampoline_start)), kApCode32Selector};
  data.to_code64 = {static_cast<uint32_t>(page + (ap_trampoline_code64 - ap_trampoline_start)),
                    boot::kBootCodeSelector};
  uint64_t cr3 = read_cr3();
  data.cr0 = kApCr0Long;
  data.cr3 = static_cast<uint32_t>(cr3);
  data.cr4 = kApCr4 | (read_cr4() & kCr4La57);  // CR3 is a PML5 when the boot CPU has LA57
  data.efer = kEferLme | (static_cast<uint32_t>(read_msr(kMsrEfer)) & kEferNxe);
  data.stacks = kApStacksPending;
  data.entry = reinterpret_cast<uint64_t>(&ap_entry);
  __builtin_memcpy(bytes + kApBootDataOffset, &data, sizeof(data));
  return reinterpret_cast<ApBootData*>(bytes + kApBootDataOffset);
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
StubStatus find_startup_page(const WakeRequest& request, const CpuList& cpus, uint64_t* page) {
  uint32_t self = current_apic_id();
  uint64_t cr3 = read_cr3();
  if (cpu_index_of(cpus, self) < 0) return fail("SMP: boot CPU not listed (APIC ID)", self);
  if (!helpers.apic.open()) return fail("SMP: no local APIC");
  if (cr3 >> 32) return fail("SMP: CR3 above 4 GiB", cr3);
  if (!find_trampoline_page(*request.params, request.params_addr, *request.env, request.image, page))
    return fail("SMP: no page below 1 MiB");
  return StubStatus::success();
}

// INIT-SIPI-SIPI to every AP at once (Intel SDM vol. 3, 9.4.4.1), so they boot in parallel. An AP
// already running ignores the second START IPI, which is for one that missed the first.
void send_init_and_startup(uint64_t page) {
  auto vector = static_cast<uint8_t>(page >> 12);
  bool old_cpu = needs_init_delay();
  for (uint32_t i = 0; i < helpers.woken; ++i) helpers.apic.send_init_assert(helpers.woken_ids[i]);
  if (old_cpu) delay(kInitDelayMicroseconds);
  for (uint32_t i = 0; i < helpers.woken; ++i) helpers.apic.send_init_deassert(helpers.woken_ids[i]);
  for (uint32_t i = 0; i < helpers.woken; ++i) helpers.apic.send_startup(helpers.woken_ids[i], vector);
  delay(old_cpu ? kStartupDelayMicroseconds : kModernStartupDelayMicroseconds);
  for (uint32_t i = 0; i < helpers.woken; ++i) helpers.apic.send_startup(helpers.woken_ids[i], vector);
}

// Too late: such a stack's AP must never run `work` (park_helpers' INIT stops it wherever it is).
// Returns how many.
uint32_t abandon_late_helpers() {
  uint32_t abandoned = 0;
  for (uint32_t i = 0; i < helpers.count; ++i) abandoned += claim(helpers.slots[i], kAbandoned);
  return abandoned;
}

}  // namespace

uint64_t helper_memory_size(uint32_t count) { return slot_table_size(count) + count * kHelperStackSize; }

uint32_t wake_helpers(const WakeRequest& request, HelperReport* report) {
  *report = HelperReport{};
  helpers.woken = helpers.count = 0;
  if (request.max_cpus <= 1) return 0;
  // A machine with one CPU has nobody to start, which is no problem.
  CpuList cpus;
  report->problem = find_cpus(*request.memory, request.rsdp, &cpus);
  if (!report->problem.ok()) return 0;
  report->found = cpus.count;
  if (cpus.count < 2) return 0;
  uint64_t page = 0;
  report->problem = find_startup_page(request, cpus, &page);
  if (!report->problem.ok()) return 0;
  // The APs the firmware lists that may be started, in its order (acpi_madt.h's rules).
  CpuStartRules rules{current_apic_id(), request.max_cpus, request.disabled_apic_id, helpers.apic.x2apic()};
  uint32_t woken = cpus_to_start(cpus, rules, helpers.woken_ids);
  if (!woken) return 0;  // park_helpers INITs only CPUs this woke: none
  // Everything an AP reads before its stack is in place before the first INIT.
  helpers.boot_data = prepare_trampoline(*request.memory, page);
  if (!helpers.boot_data) {
    report->problem = fail("SMP: no page below 1 MiB", page);
    return 0;
  }
  helpers.break_trampoline = request.break_trampoline;
  helpers.woken = woken;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  helpers.apic.enable();
  helpers.check_in_deadline = deadline_after(kCheckInMicroseconds);
  send_init_and_startup(page);
  return helpers.woken;
}

uint32_t start_helpers(HelperWork work, void* arg, uint32_t count, Range memory, PhysicalMemory& physical) {
  uint32_t fit = helpers_that_fit(memory.size());
  if (count > helpers.woken) count = helpers.woken;
  if (count > fit) count = fit;
  if (!count) return 0;
  auto* slots = reinterpret_cast<ApSlot*>(physical.writable(memory.begin, helper_memory_size(count)));
  if (!slots) return 0;
  for (uint32_t i = 0; i < count; ++i) slots[i] = ApSlot{kWaiting, 0, 0};
  helpers.slots = slots;
  helpers.count = count;
  helpers.work = work;
  helpers.arg = arg;
  ApBootData& data = *helpers.boot_data;
  data.stack_base = memory.begin + slot_table_size(count);
  data.stack_size = kHelperStackSize;
  helpers.started_at = rdtsc();
  // The release: an AP that reads the number of stacks sees the stacks, the slots and the work.
  __atomic_store_n(&data.stacks, helpers.break_trampoline ? 0 : count, __ATOMIC_RELEASE);
  return count;
}

uint32_t park_helpers(HelperReport* report) {
  if (!helpers.woken) return 0;
  uint32_t ran = 0;
  if (helpers.count) {
    // An AP that never checks in must not hold up the boot: the wait is bounded, from the first INIT.
    wait_while_any_in(kWaiting, helpers.check_in_deadline);
    report->abandoned = abandon_late_helpers();
    report->started = helpers.count - report->abandoned;
    uint64_t last_check_in = helpers.started_at;
    for (uint32_t i = 0; i < helpers.count; ++i)
      if (state_of(helpers.slots[i]) != kAbandoned && helpers.slots[i].checked_in_at > last_check_in)
        last_check_in = helpers.slots[i].checked_in_at;
    report->join_cycles = last_check_in - helpers.started_at;
    wait_while_any_in(kRunning, deadline_after(kParkMicroseconds));
    for (uint32_t i = 0; i < helpers.count; ++i) ran += state_of(helpers.slots[i]) == kDone;
  }
  // Wait-for-SIPI, as after firmware: the kernel starts the APs with its own INIT-SIPI-SIPI, and
  // an AP halted in our trampoline could wake (NMI, SMI) into a page the kernel has reused.
  for (uint32_t i = 0; i < helpers.woken; ++i) init(helpers.woken_ids[i]);
  helpers.apic.close();
  helpers.woken = helpers.count = 0;
  return ran;
}

}  // namespace kpack::smp
