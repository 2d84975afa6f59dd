#include "stub/arch/halt.h"

namespace kpack {
namespace {

// Calls serial::write rather than passing its address: before self-relocation, taking a
// function's address would be an absolute GOT load.
constexpr auto kCom1 = [](const char* text) { serial::write(text); };

}  // namespace

void print_status(const char* prefix, StubStatus status) { write_status(kCom1, prefix, status); }

[[noreturn]] void halt_with(StubStatus status) { halt_with(kCom1, status); }

}  // namespace kpack
