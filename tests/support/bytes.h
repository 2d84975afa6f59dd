// Byte helpers for tests, seeds and harnesses that build or inspect files field by field. Integers
// go through formats/le.h, the same little-endian code the packer and the stub use.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "formats/le.h"

namespace kpack::test {

// Copies `value` (a structure of le.h fields, or a byte array) to `offset`, growing `out` if needed.
template <typename T>
void put(std::vector<uint8_t>& out, uint64_t offset, const T& value) {
  if (out.size() < offset + sizeof(T)) out.resize(offset + sizeof(T));
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

// The structure at `offset`.
template <typename T>
T get(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

inline uint32_t le32_at(std::span<const uint8_t> bytes, uint64_t offset) { return load_le<uint32_t>(bytes.data() + offset); }

// "0x1f" for 31, as the packer's messages print numbers.
inline std::string hex_string(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%#llx", static_cast<unsigned long long>(value));
  return text;
}

inline void append_le32(std::vector<uint8_t>& out, uint32_t value) {
  out.resize(out.size() + 4);
  store_le(out.data() + out.size() - 4, value);
}

}  // namespace kpack::test
