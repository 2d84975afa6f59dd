// The AVX registers, for XXH3's AVX2 build (engine/xxh3.h). Off after reset: software that wants
// them sets CR4.OSXSAVE and enables their state in XCR0, on each CPU (XCR0 is per CPU).
#pragma once

namespace kpack {

// Enables the x87, SSE and AVX state where the CPU has XSAVE and AVX; does nothing elsewhere.
// Runs on the boot CPU before the engine and on every AP before it takes a frame. The kernel needs
// nothing undone: head_64.S keeps only CR4's PAE, LA57 and MCE, and the FPU setup writes XCR0.
void enable_avx_registers();

}  // namespace kpack
