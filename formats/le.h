// Little-endian integers with alignment 1, so on-disk and in-memory structures can be described
// field by field with no padding, and read or written the same way on the host and in the stub.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace kpack {

template <typename T>
class Le {
 public:
  constexpr Le() = default;
  constexpr Le(T value) { *this = value; }

  constexpr operator T() const {
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes_[i]) << (8 * i));
    return value;
  }

  constexpr Le& operator=(T value) {
    for (size_t i = 0; i < sizeof(T); ++i) bytes_[i] = static_cast<uint8_t>(value >> (8 * i));
    return *this;
  }

 private:
  uint8_t bytes_[sizeof(T)] = {};
};

using ul16 = Le<uint16_t>;
using ul32 = Le<uint32_t>;
using ul64 = Le<uint64_t>;

static_assert(sizeof(ul64) == 8 && alignof(ul64) == 1);

// The one way to read or write a little-endian integer at an arbitrary byte address.
template <typename T>
inline T load_le(const uint8_t* at) {
  Le<T> value;
  __builtin_memcpy(&value, at, sizeof(value));
  return value;
}

template <typename T>
inline void store_le(uint8_t* at, T value) {
  Le<T> encoded(value);
  __builtin_memcpy(at, &encoded, sizeof(encoded));
}

}  // namespace kpack
