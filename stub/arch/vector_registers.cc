#include "stub/arch/vector_registers.h"

#include "stub/arch/cpu.h"

namespace kpack {

void enable_avx_registers() {
  constexpr uint32_t kXsave = 1u << 26, kAvx = 1u << 28;
  if ((cpuid(1).ecx & (kXsave | kAvx)) != (kXsave | kAvx)) return;
  uint64_t enable = xcr0_to_enable(cpuid(0xD).eax);
  if (!enable) return;

  uint64_t cr4;
  asm volatile("mov %%cr4, %0" : "=r"(cr4));
  asm volatile("mov %0, %%cr4" : : "r"(cr4 | kCr4Osxsave));  // XGETBV and XSETBV from here on
  write_xcr0(read_xcr0() | enable);
}

}  // namespace kpack
