// What the stub can learn at boot that differs from one boot to the next (stub/arch/entropy.cc).
#pragma once

#include <stdint.h>

namespace kpack {

// RDRAND when CPUID reports it (retried as the kernel does), RDTSC when present, else the i8254
// counter, mixed into `state`.
uint64_t mix_cpu_entropy(uint64_t state);

}  // namespace kpack
