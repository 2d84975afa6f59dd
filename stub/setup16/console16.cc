// Text output of the 16-bit setup: the BIOS teletype for the screen, and COM1 (stub/arch/serial.cc,
// the very code the 64-bit stub prints with) for errors, so a headless machine says why it stopped.
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

void screen_put(char c) {
  BiosRegs regs = bios_regs();
  regs.eax = 0x0E00 | static_cast<uint8_t>(c);  // teletype output
  regs.ebx = 0x0007;                            // page 0, light grey
  bios_call(0x10, &regs, nullptr);
}

}  // namespace

void screen_write(const char* text) {
  for (; *text; ++text) {
    if (*text == '\n') screen_put('\r');
    screen_put(*text);
  }
}

void screen_write_hex(uint16_t value) {
  char digits[5];
  for (int i = 0; i < 4; ++i) digits[i] = "0123456789abcdef"[(value >> (12 - 4 * i)) & 0xF];
  digits[4] = 0;
  screen_write(digits);
}

void halt_setup(const char* message) {
  auto screen_and_com1 = [](const char* text) {
    screen_write(text);
    serial::write(text);
  };
  halt_with(screen_and_com1, kpack::fail(message), StatusNumbers::kNone);
}

}  // namespace kpack::setup16
