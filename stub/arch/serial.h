// COM1 output for errors and kpack.debug. Polled, bounded waits: a machine without a UART must
// not hang the boot.
#pragma once

#include <stdint.h>

namespace kpack::serial {

void write(const char* text);
void write_hex(uint64_t value);
void write_decimal(uint64_t value);

}  // namespace kpack::serial
