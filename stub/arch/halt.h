// The one way the stub stops: an error line on COM1, then a halt with interrupts off. The kernel is
// never entered after it. Safe before self-relocation (entry64.S checks the record that early).
#pragma once

#include "stub/arch/cpu.h"
#include "stub/engine/status.h"

namespace kpack {

// Prints "PREFIX MESSAGE (A, B)" and a newline: an error the boot goes on after.
void print_status(const char* prefix, StubStatus status);

// Prints "kpack: error: MESSAGE (A, B)" and "kpack: halted; the kernel was not started".
[[noreturn]] void halt_with(StubStatus status);

}  // namespace kpack
