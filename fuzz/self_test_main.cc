// Runs a fuzz target's spoil cases (fuzz/self_test.h): SELF_TEST FILE... fails when a case trips no
// FUZZ_CHECK, or when a FUZZ_CHECK written in one of FILE... (the target's source and the check
// headers it owns) trips in no case, so that no invariant can stand that cannot fail.
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "fuzz/self_test.h"

namespace kpack::fuzz {

std::vector<SpoilCase>& spoil_cases() {
  static std::vector<SpoilCase> cases;
  return cases;
}

}  // namespace kpack::fuzz

namespace {

using Site = std::pair<std::string, int>;  // file name without its folder, line

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// The lines of `path` that state an invariant: FUZZ_CHECK( outside the macro's own definitions and
// outside the self-test's cases, which begin at the line "#ifdef KPACK_FUZZ_SELF_TEST".
std::set<Site> sites_in(const std::string& path, bool& readable) {
  std::set<Site> sites;
  std::ifstream in(path);
  readable = in.good();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("#ifdef KPACK_FUZZ_SELF_TEST", 0) == 0 && path.find("fuzz_check.h") == std::string::npos) break;
    if (line.find("FUZZ_CHECK(") != std::string::npos && line.find("#define") == std::string::npos)
      sites.insert({base_name(path), number});
  }
  return sites;
}

}  // namespace

int main(int argc, char** argv) {
  using kpack::fuzz::Tripped;
  std::set<Site> tripped;
  int failures = 0;
  for (const kpack::fuzz::SpoilCase& c : kpack::fuzz::spoil_cases()) {
    try {
      c.run();
      std::printf("FAIL %s: broke no invariant\n", c.name);
      ++failures;
    } catch (const Tripped& t) {
      std::printf("ok   %s: %s:%d\n", c.name, base_name(t.file).c_str(), t.line);
      tripped.insert({base_name(t.file), t.line});
    }
  }
  for (int i = 1; i < argc; ++i) {
    bool readable = false;
    std::set<Site> sites = sites_in(argv[i], readable);
    if (!readable) {
      std::printf("FAIL %s: cannot read it\n", argv[i]);
      ++failures;
    }
    for (const Site& site : sites)
      if (!tripped.count(site)) {
        std::printf("FAIL %s:%d: no case breaks this FUZZ_CHECK\n", site.first.c_str(), site.second);
        ++failures;
      }
  }
  std::printf("%zu cases, %zu invariants tripped, %d failures\n", kpack::fuzz::spoil_cases().size(), tripped.size(),
              failures);
  return failures ? 1 : 0;
}
