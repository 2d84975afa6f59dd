#include "stub/arch/halt.h"

#include "stub/arch/serial.h"

namespace kpack {

void print_status(const char* prefix, StubStatus status) {
  serial::write(prefix);
  serial::write(status.message ? status.message : "unknown error");
  serial::write(" (");
  serial::write_hex(status.a);
  serial::write(", ");
  serial::write_hex(status.b);
  serial::write(")\n");
}

[[noreturn]] void halt_with(StubStatus status) {
  print_status("kpack: error: ", status);
  serial::write("kpack: halted; the kernel was not started\n");
  halt();
}

}  // namespace kpack
