// Errors of the unpack engine. The engine runs in the stub, where nothing may allocate, so an
// error is a fixed message plus up to two numbers that the stub prints in hex and tests compare.
#pragma once

#include <stdint.h>

namespace kpack {

struct [[nodiscard]] StubStatus {
  const char* message = nullptr;  // nullptr means success
  uint64_t a = 0;
  uint64_t b = 0;

  constexpr bool ok() const { return message == nullptr; }
  static constexpr StubStatus success() { return {}; }
};

constexpr StubStatus fail(const char* message, uint64_t a = 0, uint64_t b = 0) { return StubStatus{message, a, b}; }

#define KPACK_TRY(expr)                   \
  do {                                    \
    ::kpack::StubStatus status_ = (expr); \
    if (!status_.ok()) return status_;    \
  } while (0)

}  // namespace kpack
