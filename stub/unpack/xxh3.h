// XXH3-64, the frame table's digest, built from Debian's xxhash.h twice: once for SSE2, which
// every x86-64 CPU has, and once for AVX2, which hashes 32 bytes per instruction where SSE2 takes
// 16, in about half the instructions (doc/benchmark-history.md, "Figures the code rests on"). xxh3_for_this_cpu picks
// AVX2 when the CPU has it and the running code has enabled its registers (CR4.OSXSAVE and XCR0,
// which the legacy entries set on every CPU they run on, the firmware under the EFI entries, and a
// host OS for its programs); both builds give the same digest.
//
// No AVX-512 build: on the host it hashed frames in cache faster than AVX2 but frames fresh from
// memory slower (doc/benchmark-history.md, "Figures the code rests on"); QEMU's TCG has no AVX-512 to boot-test it on, and the stub would have to
// enable its state.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace kpack {

// Asks the CPU which build to run on every call: CPUID traps to the hypervisor in a VM (about 8 us
// on the benchmark machine, more than hashing a 300 KB frame), so hot callers keep the function
// xxh3_for_this_cpu returns.
uint64_t xxh3_64(const void* data, size_t size);

// What decides the build: the CPU's answers to CPUID and the state its running code enabled.
struct VectorSupport {
  uint32_t max_leaf = 0;   // CPUID 0 EAX
  uint32_t leaf1_ecx = 0;  // CPUID 1 ECX: OSXSAVE (27), AVX (28)
  uint32_t leaf7_ebx = 0;  // CPUID 7 EBX: AVX2 (5)
  uint64_t xcr0 = 0;       // read only where OSXSAVE is set (XGETBV faults before)
};
VectorSupport vector_support_of_this_cpu();

enum class Xxh3Build : uint8_t { kSse2, kAvx2 };
Xxh3Build xxh3_build_for(const VectorSupport& cpu);
Xxh3Build xxh3_build_for_this_cpu();
const char* xxh3_build_name(Xxh3Build build);  // as kpack.debug prints it

// The build xxh3_64 would pick on the CPU that calls this: for callers that hash many times on
// one CPU (each frame decoder), so CPUID, a VM exit under KVM, runs once and not per frame.
using Xxh3Function = uint64_t (*)(const void* data, size_t size);
Xxh3Function xxh3_for_this_cpu();

// The two builds, for tests that compare them; callers use xxh3_64.
uint64_t xxh3_64_sse2(const void* data, size_t size);
uint64_t xxh3_64_avx2(const void* data, size_t size);

}  // namespace kpack
