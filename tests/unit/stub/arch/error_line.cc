// The error line every mode of the stub prints (stub/arch/halt.h): the same text whether it goes
// to COM1, the BIOS screen or the firmware's console, which the boot tests grep for.
#include <doctest/doctest.h>

#include <string>

#include "stub/arch/halt.h"

using namespace kpack;

namespace {

std::string error_line(StubStatus status, StatusNumbers numbers = StatusNumbers::kPair) {
  std::string text;
  write_error([&text](const char* part) { text += part; }, status, numbers);
  return text;
}

}  // namespace

TEST_CASE("an engine error shows its message and both numbers in hex") {
  CHECK(error_line(fail("corrupt LZ4 frame", 0x1f, 0)) == "kpack: error: corrupt LZ4 frame (0x1f, 0x0)\n");
  CHECK(error_line(StubStatus{}) == "kpack: error: unknown error (0x0, 0x0)\n");
}

TEST_CASE("an EFI error names its status; a 16-bit setup error shows no numbers") {
  CHECK(error_line(fail("cannot read the memory map", 0x8000000000000005), StatusNumbers::kEfiStatus) ==
        "kpack: error: cannot read the memory map (EFI status 0x8000000000000005)\n");
  CHECK(error_line(fail("the A20 gate does not open", 7, 8), StatusNumbers::kNone) ==
        "kpack: error: the A20 gate does not open\n");
}

TEST_CASE("a status line after which the boot goes on takes its own prefix") {
  std::string text;
  write_status([&text](const char* part) { text += part; }, "kpack: cpus: one CPU: ", fail("SMP: no local APIC"));
  CHECK(text == "kpack: cpus: one CPU: SMP: no local APIC (0x0, 0x0)\n");
}

TEST_CASE("numbers are hex without leading zeros, all 64 bits of them") {
  CHECK(std::string(serial::hex_text(0).text) == "0x0");
  CHECK(std::string(serial::hex_text(0xabc).text) == "0xabc");
  CHECK(std::string(serial::hex_text(~0ull).text) == "0xffffffffffffffff");
}
