#include "stub/arch/halt.h"

#include "stub/arch/reset.h"

namespace kpack {
namespace {

// Calls serial::write rather than passing its address: before self-relocation, taking a
// function's address would be an absolute GOT load.
constexpr auto kCom1 = [](const char* text) { serial::write(text); };

}  // namespace

void print_status(const char* prefix, StubStatus status) { write_status(kCom1, prefix, status); }

[[noreturn]] void halt_with(StubStatus status) { halt_with(kCom1, status); }

[[noreturn]] void reset_with(StubStatus status, uint64_t seconds) {
  write_error(kCom1, status);
  serial::print("kpack: the kernel was not started; resetting in %lu s (panic=%lu)\n", seconds, seconds);
  wait_seconds(seconds);
  serial::write("kpack: resetting\n");
  reset_machine();
}

}  // namespace kpack
