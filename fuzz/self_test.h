// A fuzz target's self-test: every FUZZ_CHECK must be able to fail, or it proves nothing. Built with
// gcc beside the unit tests (ctest unit.fuzz.TARGET), the target's file registers cases that each
// break one invariant on purpose, calling its check with a spoiled value (a payload one byte short,
// an error message on two lines); fuzz/self_test_main.cc runs them, and fails when a case trips
// nothing or when a FUZZ_CHECK of the files it is given trips in no case.
#pragma once

#ifdef KPACK_FUZZ_SELF_TEST

#include <functional>
#include <vector>

#include "fuzz/fuzz_check.h"

namespace kpack::fuzz {

struct SpoilCase {
  const char* name;
  std::function<void()> run;  // must throw Tripped: the broken invariant's FUZZ_CHECK
};

std::vector<SpoilCase>& spoil_cases();

struct SpoilRegistration {
  SpoilRegistration(const char* name, std::function<void()> run) { spoil_cases().push_back({name, std::move(run)}); }
};

}  // namespace kpack::fuzz

#define FUZZ_SPOIL_JOIN2(a, b) a##b
#define FUZZ_SPOIL_JOIN(a, b) FUZZ_SPOIL_JOIN2(a, b)
// FUZZ_SPOIL("what is broken") { ...call a check with a spoiled value... }
#define FUZZ_SPOIL(name)                                                                  \
  static void FUZZ_SPOIL_JOIN(spoil_, __LINE__)();                                        \
  static ::kpack::fuzz::SpoilRegistration FUZZ_SPOIL_JOIN(spoil_registration_, __LINE__)( \
      name, FUZZ_SPOIL_JOIN(spoil_, __LINE__));                                           \
  static void FUZZ_SPOIL_JOIN(spoil_, __LINE__)()

#endif
