// Errors are values: every failure path returns one, so tests and fuzzers reach all of them.
// A message is one line that names the file it is about and the problem.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <variant>

namespace kpack {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

struct Ok {};
using Status = Result<Ok>;

inline Error error_in(const std::string& file, const std::string& problem) { return Error{file + ": " + problem}; }

// How messages print addresses and offsets: "0x1f" for 31.
inline std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%#llx", static_cast<unsigned long long>(value));
  return text;
}

// The value of a Result, or else a return of its error from the enclosing function: the packer's
// KPACK_TRY (the engine's, over StubStatus, is stub/base/status.h), as an expression so that the
// value is bound where it is computed. A GNU statement expression, which GCC and Clang both take.
#define KPACK_TRY_RESULT(expr)            \
  ({                                      \
    auto result_ = (expr);                \
    if (!result_) return result_.error(); \
    std::move(result_.value());           \
  })

}  // namespace kpack
