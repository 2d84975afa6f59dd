// What stub.ld defines: where the stub ends and the packer's record begins, the stub's own
// relocations, and the libraries' static constructors.
#pragma once

#include <stdint.h>

#include "stub/runtime/asm_linkage.h"

extern "C" {
extern uint8_t __stub_end[] KPACK_ASM_SYMBOL;
extern const uint8_t __rela_start[] KPACK_ASM_SYMBOL;
extern const uint8_t __rela_end[] KPACK_ASM_SYMBOL;
extern void (*const __init_array_start[])() KPACK_ASM_SYMBOL;
extern void (*const __init_array_end[])() KPACK_ASM_SYMBOL;
}
