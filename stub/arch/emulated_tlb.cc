#include "stub/arch/emulated_tlb.h"

#include "stub/arch/cpu.h"

namespace kpack {
namespace {

constexpr uint32_t kCpuidHypervisor = 1u << 31;  // CPUID 1 ECX
constexpr uint32_t kInitialEntries = 256;        // QEMU's CPU_TLB_DYN_DEFAULT_BITS

// A write that changes nothing, atomically: the host maps the page for writing now, once, as the
// decode's first write would (a read would map the host's zero page, and that write fault again),
// and a byte another CPU stores meanwhile is never lost.
void touch_for_write(uint8_t* byte) { asm volatile("lock orb $0, %0" : "+m"(*byte)); }

}  // namespace

bool under_qemu_tcg() {
  if (!(cpuid(1).ecx & kCpuidHypervisor)) return false;
  CpuidResult id = cpuid(0x40000000);
  // "TCGT" "CGTC" "GTCG" in EBX, ECX, EDX.
  return id.ebx == 0x54474354 && id.ecx == 0x43544743 && id.edx == 0x47435447;
}

uint64_t grow_emulated_tlb(uint8_t* ram, uint64_t size, uint64_t working_set) {
  if (!under_qemu_tcg()) return 0;
  uint64_t pages = size / 4096, touched = 0;
  uint64_t wanted = kInitialEntries;
  while (wanted < kEmulatedTlbEntries && wanted * 4096 < 4 * working_set) wanted *= 2;
  uint64_t cr3 = read_cr3();
  // Each round fills three quarters of the entries the TLB has, so the flush after it doubles it.
  for (uint64_t entries = kInitialEntries; entries < wanted; entries *= 2) {
    uint64_t round = entries * 3 / 4;
    if (round > pages) break;
    for (uint64_t page = 0; page < round; ++page) touch_for_write(ram + page * 4096);
    write_cr3(cr3);
    touched += round;
  }
  return touched;
}

}  // namespace kpack
