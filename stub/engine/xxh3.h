// XXH3-64, the frame table's digest, built from Debian's xxhash.h twice: once for SSE2, which
// every x86-64 CPU has, and once for AVX2, which hashes 32 bytes per instruction where SSE2 takes
// 16 (on the 6.1 cloud kernel's 34 MB of frames: ~11 M instructions against ~24 M; the library's
// own -O2 build takes ~38 M). xxh3_64 picks the AVX2 build when the CPU has AVX2 and the running
// code has enabled its registers (CR4.OSXSAVE and XCR0, which the stub sets on every CPU it runs
// on and a host OS sets for its programs); both builds give the same digest.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace kpack {

uint64_t xxh3_64(const void* data, size_t size);

// The build xxh3_64 would pick on the CPU that calls this: for callers that hash many times on
// one CPU (each frame decoder), so CPUID, a VM exit under KVM, runs once and not per frame.
using Xxh3Function = uint64_t (*)(const void* data, size_t size);
Xxh3Function xxh3_for_this_cpu();

// CPUID says AVX2, and XCR0 has the SSE and AVX state enabled.
bool avx2_enabled();

// The two builds, for tests that compare them; callers use xxh3_64.
uint64_t xxh3_64_sse2(const void* data, size_t size);
uint64_t xxh3_64_avx2(const void* data, size_t size);

}  // namespace kpack
