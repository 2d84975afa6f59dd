// Structures (of le.h fields) copied into and out of a file's bytes at an offset the caller has
// already checked.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace kpack {

template <typename T>
void put(std::vector<uint8_t>& out, uint64_t offset, const T& value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <typename T>
T get(std::span<const uint8_t> in, uint64_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

}  // namespace kpack
