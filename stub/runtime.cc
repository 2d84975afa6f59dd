// The freestanding runtime the compiler and the codec libraries expect: memory functions, a bump
// allocator, the stack-protector canary and its failure handler, self-relocation. Built with
// -fno-builtin and -fno-tree-loop-distribute-patterns so these never call themselves.
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"
#include "serial.h"

extern "C" {

// %fs points here; the canary sits at %fs:0x28 as in the x86-64 TLS ABI.
alignas(64) uint64_t stub_tls[8] = {0, 0, 0, 0, 0, 0x2f8a3c19e5d7b640ull, 0, 0};

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
void* calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return nullptr;
  void* p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
void free(void*) {}

[[noreturn]] void __stack_chk_fail() { kpack::halt_with("stack smashing detected in the stub"); }

struct Rela {
  uint64_t offset;
  uint64_t info;
  int64_t addend;
};
extern const Rela __rela_start[] __attribute__((visibility("hidden")));
extern const Rela __rela_end[] __attribute__((visibility("hidden")));

// Runs before anything that holds a pointer: only R_X86_64_RELATIVE may appear (the build checks).
void apply_relocations(uint8_t* base) {
  constexpr uint32_t kRelative = 8;
  for (const Rela* r = __rela_start; r < __rela_end; ++r) {
    if (static_cast<uint32_t>(r->info) != kRelative) {
      for (;;) asm volatile("cli; hlt");
    }
    *reinterpret_cast<uint64_t*>(base + r->offset) = reinterpret_cast<uint64_t>(base) + r->addend;
  }
}

}  // extern "C"

namespace kpack {

[[noreturn]] void halt() {
  for (;;) asm volatile("cli; hlt");
}

[[noreturn]] void halt_with(const char* message) {
  serial::write("kpack: error: ");
  serial::write(message);
  serial::write("\nkpack: halted; the kernel was not started\n");
  halt();
}

}  // namespace kpack
