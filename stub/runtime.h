// Stub-only runtime services.
#pragma once

namespace kpack {

[[noreturn]] void halt();
[[noreturn]] void halt_with(const char* message);

// Points the IDT at handlers that report a CPU exception on COM1 and halt (exceptions.cc).
void install_exception_handlers();

}  // namespace kpack
