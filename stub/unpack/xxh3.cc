#include "stub/unpack/xxh3.h"

#include "stub/arch/cpu.h"

namespace kpack {

namespace {

constexpr uint32_t kOsxsave = 1u << 27, kAvx = 1u << 28;  // CPUID 1 ECX
constexpr uint32_t kAvx2 = 1u << 5;                       // CPUID 7 EBX
constexpr uint64_t kSseAndAvxState = 0b110;               // XCR0 bits 1 and 2

}  // namespace

VectorSupport vector_support_of_this_cpu() {
  VectorSupport cpu;
  cpu.max_leaf = cpuid(0).eax;
  if (cpu.max_leaf < 7) return cpu;
  cpu.leaf1_ecx = cpuid(1).ecx;
  cpu.leaf7_ebx = cpuid(7).ebx;
  // XGETBV is only defined once CR4.OSXSAVE is set, which CPUID.1's OSXSAVE bit reflects.
  if (cpu.leaf1_ecx & kOsxsave) cpu.xcr0 = read_xcr0();
  return cpu;
}

Xxh3Build xxh3_build_for(const VectorSupport& cpu) {
  if (cpu.max_leaf < 7 || (cpu.leaf1_ecx & (kOsxsave | kAvx)) != (kOsxsave | kAvx)) return Xxh3Build::kSse2;
  if (!(cpu.leaf7_ebx & kAvx2) || (cpu.xcr0 & kSseAndAvxState) != kSseAndAvxState) return Xxh3Build::kSse2;
  return Xxh3Build::kAvx2;
}

Xxh3Build xxh3_build_for_this_cpu() { return xxh3_build_for(vector_support_of_this_cpu()); }

const char* xxh3_build_name(Xxh3Build build) { return build == Xxh3Build::kAvx2 ? "AVX2" : "SSE2"; }

Xxh3Function xxh3_for_this_cpu() { return xxh3_build_for_this_cpu() == Xxh3Build::kAvx2 ? xxh3_64_avx2 : xxh3_64_sse2; }

uint64_t xxh3_64(const void* data, size_t size) { return xxh3_for_this_cpu()(data, size); }

}  // namespace kpack
