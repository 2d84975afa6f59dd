#include "stub/arch/serial.h"

#include <stdarg.h>

#include "stub/arch/cpu.h"

namespace kpack::serial {
namespace {

constexpr uint16_t kCom1 = 0x3F8;
constexpr uint8_t kLineStatusThrEmpty = 0x20;

bool initialized = false;

void init() {
  outb(kCom1 + 1, 0x00);  // no interrupts
  outb(kCom1 + 3, 0x80);  // divisor latch
  outb(kCom1 + 0, 0x01);  // 115200 baud
  outb(kCom1 + 1, 0x00);
  outb(kCom1 + 3, 0x03);  // 8N1
  outb(kCom1 + 2, 0xC7);  // FIFO on, cleared
  outb(kCom1 + 4, 0x03);  // DTR, RTS
  initialized = true;
}

void put(char c) {
  for (int spins = 0; spins < 100000 && !(inb(kCom1 + 5) & kLineStatusThrEmpty); ++spins) {
  }
  outb(kCom1, static_cast<uint8_t>(c));
}

}  // namespace

void write(const char* text) {
  if (!initialized) init();
  for (; *text; ++text) {
    if (*text == '\n') put('\r');
    put(*text);
  }
}

void write_hex(uint64_t value) { write(hex_text(value).text); }

void write_decimal(uint64_t value) {
  char buffer[21];
  int at = 20;
  buffer[at] = 0;
  do {
    buffer[--at] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  write(buffer + at);
}

void print(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char literal[2] = {};
  for (const char* at = format; *at; ++at) {
    if (at[0] == '%' && at[1] == 's') {
      write(va_arg(args, const char*));
      ++at;
    } else if (at[0] == '%' && at[1] == 'l' && (at[2] == 'x' || at[2] == 'u')) {
      uint64_t value = va_arg(args, uint64_t);
      at[2] == 'x' ? write_hex(value) : write_decimal(value);
      at += 2;
    } else {
      literal[0] = *at;
      write(literal);
    }
  }
  va_end(args);
}

}  // namespace kpack::serial
