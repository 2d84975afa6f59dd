// The real Debian kernel the boot tests fetch (tests/boot/prepare.sh writes its vmlinuz path to a
// file). Test cases that need it carry "[real kernel]" in their names: ctest runs them as
// unit.real_kernel, with KPACK_TEST_KERNEL_PATHFILE set, and keeps them out of the other unit.*
// entries; run any other way they fail rather than pass without looking at a kernel.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kpack::test {

// `series`: another kernel the boot tests fetch ("6.12"), named by KPACK_TEST_KERNEL_6_12_PATHFILE.
inline std::string real_kernel_path(std::string series = "") {
  std::replace(series.begin(), series.end(), '.', '_');
  const std::string variable =
      series.empty() ? "KPACK_TEST_KERNEL_PATHFILE" : "KPACK_TEST_KERNEL_" + series + "_PATHFILE";
  const char* path_file = std::getenv(variable.c_str());
  REQUIRE_MESSAGE(path_file != nullptr, variable << " is not set: run these as ctest -R unit.real_kernel");
  std::ifstream in(path_file);
  std::string path;
  std::getline(in, path);
  REQUIRE_MESSAGE(!path.empty(), "no kernel path in " << path_file);
  return path;
}

}  // namespace kpack::test
