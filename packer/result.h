// Errors are values: every failure path returns one, so tests and fuzzers reach all of them.
// A message is one line that names the file it is about and the problem.
#pragma once

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

inline Error error_in(const std::string& file, const std::string& problem) {
  return Error{file + ": " + problem};
}

}  // namespace kpack
