#include "halt.h"

#include "serial.h"

namespace kpack {

[[noreturn]] void halt() {
  for (;;) asm volatile("cli; hlt");
}

[[noreturn]] void halt_with(StubStatus status) {
  serial::write("kpack: error: ");
  serial::write(status.message ? status.message : "unknown error");
  serial::write(" (");
  serial::write_hex(status.a);
  serial::write(", ");
  serial::write_hex(status.b);
  serial::write(")\nkpack: halted; the kernel was not started\n");
  halt();
}

}  // namespace kpack
