// Folds bytes of entropy into a 64-bit state: KASLR's mixer, which the stub feeds boot_params, the
// SETUP_RNG_SEED node, the firmware's RNG bytes and the CPU's RDRAND, RDTSC or i8254 (arch/entropy.cc).
#pragma once

#include <stdint.h>

#include "formats/le.h"

namespace kpack {

inline uint64_t mix_entropy(uint64_t state, uint64_t value) {
  // splitmix64's finalizer over the running state: every input bit reaches every output bit.
  uint64_t z = state ^ (value + 0x9e3779b97f4a7c15ull + (state << 6) + (state >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline uint64_t mix_entropy(uint64_t state, const uint8_t* bytes, uint64_t size) {
  uint64_t i = 0;
  for (; i + 8 <= size; i += 8) state = mix_entropy(state, load_le<uint64_t>(bytes + i));
  uint64_t tail = 0;
  for (uint64_t k = 0; i + k < size; ++k) tail |= uint64_t{bytes[i + k]} << (8 * k);
  return mix_entropy(state, tail ^ (size << 56));
}

}  // namespace kpack
