// Little-endian integers with alignment 1, so on-disk and in-memory structures can be described
// field by field with no padding, and read or written the same way on the host and in the stub.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace kpack {

// x86 only, host and stub alike: a little-endian field is the native value, read and written with
// one unaligned access (the byte loops are for constant evaluation, where memcpy is not allowed).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "kpack reads x86 structures on little-endian hosts");

template <typename T>
class Le {
 public:
  constexpr Le() = default;
  constexpr Le(T value) { *this = value; }

  constexpr operator T() const {
    if (__builtin_is_constant_evaluated()) {
      T value = 0;
      for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes_[i]) << (8 * i));
      return value;
    }
    T value;
    __builtin_memcpy(&value, bytes_, sizeof(T));
    return value;
  }

  constexpr Le& operator=(T value) {
    if (__builtin_is_constant_evaluated()) {
      for (size_t i = 0; i < sizeof(T); ++i) bytes_[i] = static_cast<uint8_t>(value >> (8 * i));
      return *this;
    }
    __builtin_memcpy(bytes_, &value, sizeof(T));
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
  T value;
  __builtin_memcpy(&value, at, sizeof(value));
  return value;
}

template <typename T>
inline void store_le(uint8_t* at, T value) {
  __builtin_memcpy(at, &value, sizeof(value));
}

}  // namespace kpack
