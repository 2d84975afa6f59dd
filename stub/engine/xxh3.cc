#include "xxh3.h"

namespace kpack {
namespace {

void cpuid(uint32_t leaf, uint32_t* eax, uint32_t* ebx, uint32_t* ecx, uint32_t* edx) {
  asm volatile("cpuid" : "=a"(*eax), "=b"(*ebx), "=c"(*ecx), "=d"(*edx) : "a"(leaf), "c"(0));
}

}  // namespace

bool avx2_enabled() {
  uint32_t max_leaf, ebx, ecx, edx;
  cpuid(0, &max_leaf, &ebx, &ecx, &edx);
  if (max_leaf < 7) return false;
  uint32_t eax;
  cpuid(1, &eax, &ebx, &ecx, &edx);
  constexpr uint32_t kOsxsave = 1u << 27, kAvx = 1u << 28;
  if ((ecx & (kOsxsave | kAvx)) != (kOsxsave | kAvx)) return false;
  cpuid(7, &eax, &ebx, &ecx, &edx);
  if (!(ebx & (1u << 5))) return false;  // AVX2
  // XGETBV is only defined once CR4.OSXSAVE is set, which CPUID.1's OSXSAVE bit reflects.
  uint32_t xcr0_low, xcr0_high;
  asm volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  constexpr uint32_t kSseAndAvxState = 0b110;
  return (xcr0_low & kSseAndAvxState) == kSseAndAvxState;
}

uint64_t xxh3_64(const void* data, size_t size) {
  return avx2_enabled() ? xxh3_64_avx2(data, size) : xxh3_64_sse2(data, size);
}

}  // namespace kpack
