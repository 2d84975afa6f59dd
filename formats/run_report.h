// What the stub leaves the running system about its boot: a setup_data node of kpack's own type,
// which the kernel keeps (it reserves every setup_data node) and shows as
// /sys/kernel/boot_params/setup_data/N/{type,data}; `kpack stats` reads it there. Written only
// when the kernel is about to start, never on a boot that halts.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack {

// 'kpak' as sysfs prints the type (0x6b70616b): far from the kernel's SETUP_* types (1..9, bit 31
// indirect); the kernel passes over types it does not know.
inline constexpr uint32_t kSetupKpackRunReport = 0x6b70616b;
inline constexpr uint8_t kRunReportMagic[8] = {'k', 'p', 'a', 'c', 'k', 'R', 'U', 'N'};
inline constexpr uint32_t kRunReportVersion = 1;

// How the stub was entered (RunReport::entry).
enum class RunEntry : uint32_t {
  kLegacy = 1,       // the boot protocol's 16- or 32-bit entry (setup sectors, code32_start)
  kLegacy64 = 2,     // the boot protocol's 64-bit entry (kexec, direct-boot VMMs)
  kEfiPe = 3,        // UEFI LoadImage/StartImage
  kEfiHandover = 4,  // the EFI handover protocol (GRUB's linuxefi)
  kPvh = 5,          // the Xen PVH direct boot ABI (an ELF's PHYS32_ENTRY note: QEMU, Cloud Hypervisor, Firecracker)
};

inline constexpr const char* run_entry_name(RunEntry entry) {
  switch (entry) {
    case RunEntry::kLegacy: return "boot protocol 16/32-bit";
    case RunEntry::kLegacy64: return "boot protocol 64-bit";
    case RunEntry::kEfiPe: return "EFI PE";
    case RunEntry::kEfiHandover: return "EFI handover";
    case RunEntry::kPvh: return "PVH";
  }
  return "unknown";
}

// The unpack engine's phases, in the order they run; RunPhase::id indexes this list, which is
// also the name kpack.debug prints.
inline constexpr const char* kRunPhaseNames[] = {"environment", "headers",  "placed",   "raw in place",
                                                 "raw moved",   "segments", "relocated"};
inline constexpr uint32_t kRunPhaseKinds = sizeof(kRunPhaseNames) / sizeof(kRunPhaseNames[0]);
inline constexpr uint32_t kRunReportMaxPhases = 8;

struct RunPhase {
  ul32 id;  // index into kRunPhaseNames
  ul32 reserved;
  ul64 bytes;   // what the phase handled (kpack.debug's bytes=)
  ul64 cycles;  // TSC cycles since the previous phase ended
};
static_assert(sizeof(RunPhase) == 24);
static_assert(offsetof(RunPhase, bytes) == 8);
static_assert(offsetof(RunPhase, cycles) == 16);

// RunReport::flags
inline constexpr uint32_t kRunKaslrPhysical = 1 << 0;  // the physical slot was drawn at random
inline constexpr uint32_t kRunKaslrVirtual = 1 << 1;   // the virtual base was moved
inline constexpr uint32_t kRunInPlace = 1 << 2;        // raw: the kernel ran where the loader put it

struct RunReport {
  uint8_t magic[8];
  ul32 version;
  ul32 size;              // sizeof(RunReport) of this version
  ul32 codec;             // Codec
  ul32 entry;             // RunEntry
  ul64 start_tsc;         // the stub's first instruction of C++
  ul64 kernel_entry_tsc;  // just before the jump into the kernel
  ul64 kernel_base;       // physical address of the kernel's lowest segment
  ul64 kernel_entry;      // physical entry point
  ul64 virtual_offset;    // added to the kernel's virtual base (KASLR)
  ul32 flags;
  ul32 phase_count;
  RunPhase phases[kRunReportMaxPhases];
  // kpack.debug's cpus line.
  ul32 cpus_found;
  ul32 cpus_started;
  ul32 cpus_ran;
  ul32 cpus_returned;
  ul32 cpus_late;
  ul32 frames;
  ul32 frames_by_helpers;
  ul32 frames_redone;
  ul64 helper_join_cycles;  // from the decode's start (the stacks handed out) to the last check-in
};
static_assert(sizeof(RunReport) == 304);
static_assert(offsetof(RunReport, version) == 8);
static_assert(offsetof(RunReport, size) == 12);
static_assert(offsetof(RunReport, codec) == 16);
static_assert(offsetof(RunReport, entry) == 20);
static_assert(offsetof(RunReport, start_tsc) == 24);
static_assert(offsetof(RunReport, kernel_entry_tsc) == 32);
static_assert(offsetof(RunReport, kernel_base) == 40);
static_assert(offsetof(RunReport, kernel_entry) == 48);
static_assert(offsetof(RunReport, virtual_offset) == 56);
static_assert(offsetof(RunReport, flags) == 64);
static_assert(offsetof(RunReport, phase_count) == 68);
static_assert(offsetof(RunReport, phases) == 72);
static_assert(offsetof(RunReport, cpus_found) == 264);
static_assert(offsetof(RunReport, cpus_started) == 268);
static_assert(offsetof(RunReport, cpus_ran) == 272);
static_assert(offsetof(RunReport, cpus_returned) == 276);
static_assert(offsetof(RunReport, cpus_late) == 280);
static_assert(offsetof(RunReport, frames) == 284);
static_assert(offsetof(RunReport, frames_by_helpers) == 288);
static_assert(offsetof(RunReport, frames_redone) == 292);
static_assert(offsetof(RunReport, helper_join_cycles) == 296);

}  // namespace kpack
