// Debian builds the libraries with -fstack-protector, which reads a canary at %fs:0x28 (the x86-64
// TLS ABI; entry64.S points %fs at this block), and with _FORTIFY_SOURCE, whose checked copies
// (libxxhash's __memcpy_chk) are refused here as glibc refuses them.
#include <stddef.h>
#include <stdint.h>

#include "stub/runtime/stack_protector.h"
#include "stub/arch/halt.h"

extern "C" {

alignas(64) uint64_t stub_tls[8] = {0, 0, 0, 0, 0, 0x2f8a3c19e5d7b640ull, 0, 0};

[[noreturn]] void __stack_chk_fail() { kpack::halt_with(kpack::fail("stack smashing detected in the stub")); }

void* __memcpy_chk(void* dst, const void* src, size_t size, size_t dst_size) {
  if (size > dst_size) kpack::halt_with(kpack::fail("buffer overflow detected in the stub", size, dst_size));
  return __builtin_memcpy(dst, src, size);
}

}  // extern "C"
