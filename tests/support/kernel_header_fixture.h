// The ELF header and program headers of a Debian kernel (tests/fixtures/kernel-headers: the first
// e_phoff + e_phnum * 56 bytes of the vmlinux inside its stock image, nothing of the kernel), for
// the unit tests of each rule that a kernel's layout decides.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kpack::test {

inline std::vector<uint8_t> real_kernel_headers(const std::string& release) {
  std::ifstream in(std::string(KPACK_FIXTURES_DIR) + "/kernel-headers/" + release + ".elf-headers", std::ios::binary);
  REQUIRE_MESSAGE(in, "no header fixture for " << release);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kpack::test
