#include "stub/engine/xxh3.h"

#include "stub/arch/cpu.h"

namespace kpack {

bool avx2_enabled() {
  if (cpuid(0).eax < 7) return false;
  constexpr uint32_t kOsxsave = 1u << 27, kAvx = 1u << 28;
  if ((cpuid(1).ecx & (kOsxsave | kAvx)) != (kOsxsave | kAvx)) return false;
  if (!(cpuid(7).ebx & (1u << 5))) return false;  // AVX2
  // XGETBV is only defined once CR4.OSXSAVE is set, which CPUID.1's OSXSAVE bit reflects.
  constexpr uint64_t kSseAndAvxState = 0b110;
  return (read_xcr0() & kSseAndAvxState) == kSseAndAvxState;
}

Xxh3Function xxh3_for_this_cpu() { return avx2_enabled() ? xxh3_64_avx2 : xxh3_64_sse2; }

uint64_t xxh3_64(const void* data, size_t size) { return xxh3_for_this_cpu()(data, size); }

}  // namespace kpack
