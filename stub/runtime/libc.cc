// The C functions the compiler and the codec libraries call: memory functions and the allocator
// entry points. Built with -fno-builtin and -fno-tree-loop-distribute-patterns so these never turn
// into calls to themselves.
#include <stddef.h>
#include <stdint.h>

extern "C" {

void* memcpy(void* dst, const void* src, size_t n) {
  void* ret = dst;
  size_t words = n / 8;
  asm volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(words) : : "memory");
  n %= 8;
  asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
  return ret;
}

void* memmove(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (d <= s || d >= s + n) return memcpy(dst, src, n);
  // Overlapping with dst above src: copy from the end, 8 bytes at a time.
  while (n >= 8) {
    n -= 8;
    uint64_t word;
    __builtin_memcpy(&word, s + n, 8);
    __builtin_memcpy(d + n, &word, 8);
  }
  while (n--) d[n] = s[n];
  return dst;
}

void* memset(void* dst, int value, size_t n) {
  void* ret = dst;
  uint64_t pattern = 0x0101010101010101ull * static_cast<uint8_t>(value);
  size_t words = n / 8;
  asm volatile("rep stosq" : "+D"(dst), "+c"(words) : "a"(pattern) : "memory");
  n %= 8;
  asm volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(pattern) : "memory");
  return ret;
}

int memcmp(const void* a, const void* b, size_t n) {
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// The codecs get their state from the engine's arena (a bump allocator in the work area) explicitly.
// These exist only because the libraries' default allocators reference them; nothing reaches them.
void* malloc(size_t) { return nullptr; }
void* calloc(size_t, size_t) { return nullptr; }
void free(void*) {}

}  // extern "C"
