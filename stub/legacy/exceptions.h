// CPU exceptions inside the stub are reported on COM1 and halt (exceptions.cc).
#pragma once

namespace kpack {

// Points the IDT at handlers that report the exception and halt instead of triple-faulting.
void install_exception_handlers();

// Loads the table install_exception_handlers built, on another CPU (the application processors).
void load_exception_handlers();

}  // namespace kpack
