// The little of a C library the 16-bit setup needs (GCC emits memcpy/memset for struct copies).
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {

extern "C" void* memcpy(void* dst, const void* src, size_t size) {
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  while (size--) *d++ = *s++;
  return dst;
}

extern "C" void* memset(void* dst, int value, size_t size) {
  auto* d = static_cast<uint8_t*>(dst);
  while (size--) *d++ = static_cast<uint8_t>(value);
  return dst;
}

bool equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

}  // namespace kpack::setup16
