// What every fuzz target uses to state an invariant: unlike assert() it stays on in release
// builds, and it names the broken invariant before aborting, so a crash file explains itself.
//
// FUZZ_CHECK states an invariant of the code under test, and each one must be able to fail: the
// self-test build (KPACK_FUZZ_SELF_TEST, fuzz/self_test.h) throws where the fuzzer aborts, and
// breaks every one on purpose. FUZZ_REQUIRE states what the harness itself needs from the system
// (a mapping, mprotect, a memory stream): nothing the code under test decides, so nothing to break.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_ABORT(kind, condition)                                                \
  do {                                                                             \
    std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, kind, #condition); \
    std::abort();                                                                  \
  } while (0)

#define FUZZ_REQUIRE(condition)                                             \
  do {                                                                      \
    if (!(condition)) FUZZ_ABORT("harness precondition failed", condition); \
  } while (0)

#ifdef KPACK_FUZZ_SELF_TEST
namespace kpack::fuzz {
// Which FUZZ_CHECK broke: what the self-test catches instead of an abort.
struct Tripped {
  const char* file;
  int line;
};
}  // namespace kpack::fuzz
#define FUZZ_CHECK(condition)                                           \
  do {                                                                  \
    if (!(condition)) throw ::kpack::fuzz::Tripped{__FILE__, __LINE__}; \
  } while (0)
#else
#define FUZZ_CHECK(condition)                                    \
  do {                                                           \
    if (!(condition)) FUZZ_ABORT("invariant broken", condition); \
  } while (0)
#endif
