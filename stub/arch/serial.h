// COM1 output for errors and kpack.debug. Polled, bounded waits: a machine without a UART must
// not hang the boot.
#pragma once

#include <stdint.h>

namespace kpack::serial {

void write(const char* text);
void write_hex(uint64_t value);
void write_decimal(uint64_t value);

// One line of kpack.debug from a format, so each line reads as the text it prints: %s a string,
// %lx a number in hex_text's form, %lu in decimal (64-bit arguments, which the compiler checks).
void print(const char* format, ...) __attribute__((format(printf, 1, 2)));

// A number as the stub shows every one, on any console: "0x", then lowercase hex digits without
// leading zeros.
struct HexText {
  char text[19];
};
inline HexText hex_text(uint64_t value) {
  HexText hex = {"0x"};
  int digits = 1;
  while (digits < 16 && (value >> (4 * digits))) ++digits;
  for (int i = 0; i < digits; ++i) hex.text[2 + i] = "0123456789abcdef"[(value >> (4 * (digits - 1 - i))) & 0xF];
  hex.text[2 + digits] = 0;
  return hex;
}

}  // namespace kpack::serial
