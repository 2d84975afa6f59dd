#include "stub/arch/vector_registers.h"

#include <stdint.h>

#include "stub/arch/cpu.h"

namespace kpack {

void enable_avx_registers() {
  constexpr uint32_t kXsave = 1u << 26, kAvx = 1u << 28;
  if ((cpuid(1).ecx & (kXsave | kAvx)) != (kXsave | kAvx)) return;
  // The state components XCR0 may hold (CPUID 0xD): x87 (bit 0) always, SSE and AVX (bits 1, 2).
  constexpr uint32_t kX87SseAvx = 0b111;
  if ((cpuid(0xD).eax & kX87SseAvx) != kX87SseAvx) return;

  uint64_t cr4;
  asm volatile("mov %%cr4, %0" : "=r"(cr4));
  asm volatile("mov %0, %%cr4" : : "r"(cr4 | kCr4Osxsave));  // XGETBV and XSETBV from here on
  write_xcr0(read_xcr0() | kX87SseAvx);
}

}  // namespace kpack
