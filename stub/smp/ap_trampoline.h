// What ap_trampoline16.S defines: the application processors' trampoline, copied below 1 MiB; the
// labels of its 32- and 64-bit parts locate its far jumps' targets in the copy.
#pragma once

#include <stdint.h>

#include "stub/runtime/asm_linkage.h"

extern "C" {
extern const uint8_t ap_trampoline_start[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_code32[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_code64[] KPACK_ASM_SYMBOL;
extern const uint8_t ap_trampoline_end[] KPACK_ASM_SYMBOL;
}
