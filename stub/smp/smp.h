// The application processors (APs) as helpers of the boot CPU, in two steps. wake_helpers starts
// those the firmware lists (ACPI MADT or MP table) with INIT-SIPI-SIPI through a trampoline below
// 1 MiB as soon as the stub has read its environment: each comes up to long mode on the stub's
// page tables and waits there, without a stack, while the boot CPU reads the kernel's headers and
// places it (under QEMU's TCG an AP's first start takes about as long as those phases: doc/benchmark-history.md, "Figures the code rests on"). start_helpers then gives them stacks in the engine's work area and
// their work: each runs `work(arg, cpu_index)` with the stub's GDT selectors, IDT, SSE and
// stack-protector canary, from whenever it arrives; nobody waits for them. park_helpers waits for
// them and puts every AP it woke back into wait-for-SIPI with INIT, as the kernel expects to find
// them. Nothing here ever halts the boot: any trouble leaves the boot CPU alone, with a reason
// for kpack.debug.
#pragma once

#include <stdint.h>

#include "stub/machine/boot_environment.h"
#include "formats/boot_params.h"
#include "stub/base/physical_memory.h"
#include "stub/base/range.h"
#include "stub/base/status.h"

namespace kpack::smp {

// `cpu_index`: 1 .. number of helpers started (0 is the boot CPU).
using HelperWork = void (*)(void* arg, uint32_t cpu_index);

inline constexpr uint64_t kHelperStackSize = 64 * 1024;

// The memory start_helpers needs for `helpers` APs: their stacks and a slot each.
uint64_t helper_memory_size(uint32_t helpers);

struct WakeRequest {
  const boot::BootParams* params = nullptr;
  uint64_t params_addr = 0;
  const BootEnvironment* env = nullptr;
  PhysicalMemory* memory = nullptr;
  uint64_t rsdp = 0;              // 0: no ACPI, look for the MP table
  Range image;                    // the loaded image: the trampoline page must not overlap it
  uint32_t max_cpus = 1;          // the boot CPU included: 1 wakes nothing (kpack.cpus=N)
  int64_t disabled_apic_id = -1;  // never sent INIT or START (disable_cpu_apicid=); -1: none
  bool break_trampoline = false;  // test only: every AP parks before it checks in
};

struct HelperReport {
  uint32_t found = 0;  // processors the firmware lists, the boot CPU included
  // Set by park_helpers:
  uint32_t started = 0;      // APs that checked in in time and so ran `work`
  uint32_t abandoned = 0;    // APs given a stack that did not check in in time (INITed again)
  uint64_t join_cycles = 0;  // TSC cycles from start_helpers to the last check-in
  StubStatus problem;        // why nothing was woken, when that is not kpack.cpus=1
};

// Sends START to up to max_cpus - 1 APs, which wait in the trampoline, and returns how many.
uint32_t wake_helpers(const WakeRequest& request, HelperReport* report);

// Gives up to `count` of the woken APs (at most as many as helper_memory_size says `memory`
// holds: free RAM below 4 GiB, 16-byte aligned) a stack and `work`, and returns how many may run
// it: each runs it (cpu_index 1..that number) when it checks in, unless park_helpers has given up
// on it. The others wait on until park_helpers.
uint32_t start_helpers(HelperWork work, void* arg, uint32_t count, Range memory, PhysicalMemory& physical);

// Waits (bounded, from the first INIT) for the APs given a stack that have not checked in,
// abandons the rest; waits (bounded) until every AP that checked in has returned from `work`;
// then INITs every AP that was woken. Fills in report's check-in fields and returns how many
// returned from `work` in time. Does nothing when none was woken, so it may be called again.
uint32_t park_helpers(HelperReport* report);

}  // namespace kpack::smp
