// Structures (of formats/le.h fields) and integers copied into and out of a file's bytes: the one
// way the packer, its tests and the fuzzers read and write them.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace kpack {

// Copies `value` to `offset`, growing `out` with zeros when it ends past it (a file built front to
// back); the packer writes only where it has made room.
template <typename T>
void put(std::vector<uint8_t>& out, uint64_t offset, const T& value) {
  if (out.size() < offset + sizeof(T)) out.resize(offset + sizeof(T));
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

// The value at `offset`, which the caller has checked lies inside `in`.
template <typename T>
T get(std::span<const uint8_t> in, uint64_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

}  // namespace kpack
