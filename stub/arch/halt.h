// The one way the stub stops, in every mode: an error line on the mode's console, then halt()
// (stub/arch/cpu.h); the kernel is never entered after it. The lines are built here and nowhere
// else: header-only templates over the console, so the 16-bit setup (its screen and COM1) and the
// EFI entry (the firmware's console) print exactly what the 64-bit stub prints on COM1. Safe
// before self-relocation (entry64.S checks the record that early).
#pragma once

#include "stub/arch/cpu.h"
#include "stub/arch/serial.h"
#include "stub/base/status.h"

namespace kpack {

// What follows a status's message: the engine's two numbers, an EFI status (in `a`), or nothing
// (the 16-bit setup's messages say it all).
enum class StatusNumbers { kPair, kEfiStatus, kNone };

// "PREFIX MESSAGE (A, B)" and a newline, through `write(const char*)`.
template <typename Write>
void write_status(Write&& write, const char* prefix, StubStatus status, StatusNumbers numbers = StatusNumbers::kPair) {
  write(prefix);
  write(status.message ? status.message : "unknown error");
  if (numbers == StatusNumbers::kPair) {
    write(" (");
    write(serial::hex_text(status.a).text);
    write(", ");
    write(serial::hex_text(status.b).text);
    write(")");
  } else if (numbers == StatusNumbers::kEfiStatus) {
    write(" (EFI status ");
    write(serial::hex_text(status.a).text);
    write(")");
  }
  write("\n");
}

// "kpack: error: MESSAGE (A, B)": the line every mode prints for an error.
template <typename Write>
void write_error(Write&& write, StubStatus status, StatusNumbers numbers = StatusNumbers::kPair) {
  write_status(write, "kpack: error: ", status, numbers);
}

// The error line, then "kpack: halted; the kernel was not started", then the halt.
template <typename Write>
[[noreturn]] void halt_with(Write&& write, StubStatus status, StatusNumbers numbers = StatusNumbers::kPair) {
  write_error(write, status, numbers);
  write("kpack: halted; the kernel was not started\n");
  halt();
}

// The 64-bit stub's console is COM1.
[[noreturn]] void halt_with(StubStatus status);
// The error line on COM1, then a wait of `seconds` and a reset (reset.h): a boot that failed with
// panic=N on the command line, N > 0, as the kernel's panic() would.
[[noreturn]] void reset_with(StubStatus status, uint64_t seconds);
// "PREFIX MESSAGE (A, B)" on COM1: an error the boot goes on after.
void print_status(const char* prefix, StubStatus status);

}  // namespace kpack
