// CPUID, for the stub's code and the engine's (which the host runs too): one leaf and subleaf.
#pragma once

#include <stdint.h>

namespace kpack {

struct CpuidResult {
  uint32_t eax, ebx, ecx, edx;
};

inline CpuidResult cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidResult r;
  asm volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(subleaf));
  return r;
}

}  // namespace kpack
