// Debian builds the codec libraries with -fstack-protector, which reads a canary at %fs:0x28 (the
// x86-64 TLS ABI). entry64.S points %fs at this block.
#include <stdint.h>

#include "asm_symbols.h"
#include "halt.h"

extern "C" {

alignas(64) uint64_t stub_tls[8] = {0, 0, 0, 0, 0, 0x2f8a3c19e5d7b640ull, 0, 0};

[[noreturn]] void __stack_chk_fail() { kpack::halt_with(kpack::fail("stack smashing detected in the stub")); }

}  // extern "C"
