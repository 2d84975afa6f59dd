// Stub-only runtime services.
#pragma once

namespace kpack {

[[noreturn]] void halt();
[[noreturn]] void halt_with(const char* message);

}  // namespace kpack
