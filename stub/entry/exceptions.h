// CPU exceptions inside the stub are reported on COM1 and halt (exceptions.cc).
#pragma once

namespace kpack {

// install_exception_handlers (entry_asm.h) points the IDT at handlers that report the exception
// and halt instead of triple-faulting; this loads its table on another CPU (the application
// processors).
void load_exception_handlers();

}  // namespace kpack
