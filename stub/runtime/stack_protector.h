// The block %fs points at, whose canary Debian's libraries read at %fs:0x28 (stack_protector.cc).
// Every CPU that runs their code points %fs here: the entries, the paging switch's return, the APs.
#pragma once

#include <stdint.h>

#include "stub/runtime/asm_linkage.h"

extern "C" {
extern uint64_t stub_tls[8] KPACK_ASM_SYMBOL;
}
