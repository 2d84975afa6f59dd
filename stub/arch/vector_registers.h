// The vector registers, for XXH3's AVX2 and AVX-512 builds (engine/xxh3.h). Off after reset:
// software that wants them sets CR4.OSXSAVE and enables their state in XCR0, on each CPU (XCR0 is
// per CPU).
#pragma once

#include <stdint.h>

namespace kpack {

// XCR0's state components: x87 (bit 0), SSE and AVX (bits 1, 2); AVX-512's opmask, ZMM0-15's
// upper halves and ZMM16-31 (bits 5, 6, 7), which XSETBV accepts only all three together.
inline constexpr uint64_t kXcr0X87SseAvx = 0b111, kXcr0Avx512 = 0b1110'0000;

// The XCR0 bits the stub turns on, from those the CPU supports (CPUID 0xD EAX): AVX's, and
// AVX-512's where it has them all; none when AVX's are not all there.
constexpr uint64_t xcr0_to_enable(uint64_t supported) {
  if ((supported & kXcr0X87SseAvx) != kXcr0X87SseAvx) return 0;
  return (supported & kXcr0Avx512) == kXcr0Avx512 ? kXcr0X87SseAvx | kXcr0Avx512 : kXcr0X87SseAvx;
}

// Enables the x87, SSE, AVX and AVX-512 state where the CPU has XSAVE and AVX (AVX-512's where it
// has that too); does nothing elsewhere. Runs on the boot CPU before the engine and on every AP
// before it takes a frame. The kernel needs nothing undone: head_64.S keeps only CR4's PAE, LA57
// and MCE, and its FPU setup writes all of XCR0, then loads the init state into every register.
void enable_avx_registers();

}  // namespace kpack
