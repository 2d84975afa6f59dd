// The CPU's and the timer's entropy for KASLR, gathered as the stock decompressor gathers it
// (arch/x86/lib/kaslr.c): RDRAND, RDTSC, or the i8254 when the CPU has no TSC.
#include "stub/arch/entropy.h"

#include "stub/arch/cpu.h"
#include "stub/base/entropy_mix.h"

namespace kpack {
namespace {

constexpr uint32_t kCpuidRdrand = 1u << 30;  // CPUID.1:ECX
constexpr uint32_t kCpuidTsc = 1u << 4;      // CPUID.1:EDX
constexpr int kRdrandRetries = 10;           // RDRAND_RETRY_LOOPS in the kernel

bool rdrand(uint64_t* value) {
  for (int i = 0; i < kRdrandRetries; ++i) {
    bool ok;
    asm volatile("rdrand %0" : "=r"(*value), "=@ccc"(ok));
    if (ok) return true;
  }
  return false;
}

// Channel 0 of the i8254, latched: its 16-bit count runs at 1.19 MHz.
uint64_t i8254() {
  outb(0x43, 0x00);
  uint8_t lo = inb(0x40);
  uint8_t hi = inb(0x40);
  return lo | uint64_t{hi} << 8;
}

}  // namespace

uint64_t mix_cpu_entropy(uint64_t state) {
  CpuidResult features = cpuid(1);
  uint64_t value;
  if ((features.ecx & kCpuidRdrand) && rdrand(&value)) state = mix_entropy(state, value);
  if (features.edx & kCpuidTsc) return mix_entropy(state, rdtsc());
  return mix_entropy(state, i8254());
}

}  // namespace kpack
