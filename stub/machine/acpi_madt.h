// The processors a multiprocessor stub may start: from ACPI's MADT (reached from the RSDP through
// the XSDT, or the RSDT on ACPI 1.0), or from the Intel MP table on a machine without ACPI. Every
// table is checked (signature, length, checksum) and read only through PhysicalMemory, so bad or
// truncated firmware tables are errors, never stray reads.
#pragma once

#include <stdint.h>

#include "stub/base/physical_memory.h"
#include "stub/base/status.h"

namespace kpack {

inline constexpr uint32_t kMaxCpus = 64;
inline constexpr uint64_t kDefaultLocalApicAddress = 0xFEE00000;

enum class CpuTable : uint8_t { kNone, kMadt, kMpTable };

struct CpuList {
  CpuTable source = CpuTable::kNone;
  uint32_t count = 0;               // processors listed in apic_id, in table order, no duplicates
  uint32_t dropped = 0;             // processors past kMaxCpus, not listed
  uint64_t local_apic_address = 0;  // MADT (or its type 5 override) or MP table
  uint32_t apic_id[kMaxCpus] = {};
};

// The processors the firmware reports as usable: MADT Local APIC entries (type 0) and Local
// x2APIC entries (type 9) with the Enabled flag, or Online Capable from MADT revision 5; MP table
// processor entries with the EN flag. `rsdp` 0 (no ACPI), or an RSDP whose tables hold no MADT,
// falls back to the MP table. An error when a table is bad, or when no table is found.
StubStatus find_cpus(PhysicalMemory& memory, uint64_t rsdp, CpuList* out);

// The list's index of `apic_id`, or -1.
int32_t cpu_index_of(const CpuList& cpus, uint32_t apic_id);

// MP specification 1.4, 4: where the floating pointer may be.
inline constexpr uint64_t kBaseMemoryKiBPointer = 0x413;  // BIOS data area: base memory in KiB
inline constexpr uint64_t kMpBiosWindow = 0xF0000, kMpBiosWindowSize = 0x10000;

// Which listed CPUs the boot CPU (`self`) may start: in table order, at most `max_cpus` - 1 of them,
// never `disabled_apic_id` (disable_cpu_apicid=: a crash kernel's old boot CPU; -1: none), and in
// xAPIC mode none whose ID an 8-bit destination cannot name (255 is the broadcast: an INIT to it
// resets every CPU, and 0x100 would reach CPU 0). Writes their APIC IDs to `ids` and returns how many.
struct CpuStartRules {
  uint32_t self = 0;
  uint32_t max_cpus = 1;
  int64_t disabled_apic_id = -1;
  bool x2apic = false;
};
uint32_t cpus_to_start(const CpuList& cpus, const CpuStartRules& rules, uint32_t ids[kMaxCpus]);

}  // namespace kpack
