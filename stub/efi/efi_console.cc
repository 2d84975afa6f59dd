#include "stub/efi/efi_boot.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"

namespace kpack::efi {

// ConOut only: the firmware mirrors it on its serial console already.
void print(const Firmware& fw, const char* text) {
  if (!fw.system->con_out) return serial::write(text);
  char16_t buffer[128];
  size_t n = 0;
  auto flush = [&] {
    buffer[n] = 0;
    fw.system->con_out->output_string(fw.system->con_out, buffer);
    n = 0;
  };
  for (; *text; ++text) {
    if (n + 3 >= sizeof(buffer) / sizeof(buffer[0])) flush();
    if (*text == '\n') buffer[n++] = u'\r';
    buffer[n++] = static_cast<char16_t>(static_cast<uint8_t>(*text));
  }
  flush();
}

EfiStatus report(const Firmware& fw, StubStatus status, StatusNumbers numbers) {
  write_error([&fw](const char* text) { print(fw, text); }, status, numbers);
  return kLoadError;
}

EfiStatus report(const Firmware& fw, const char* message, EfiStatus status) {
  report(fw, fail(message, status), StatusNumbers::kEfiStatus);
  return failed(status) ? status : kLoadError;
}

uint64_t allocate_pages(const Firmware& fw, uint64_t size, uint64_t max_address, MemoryType type) {
  uint64_t address = max_address;
  uint64_t pages = (size + 4095) / 4096;
  if (failed(fw.boot->allocate_pages(kAllocateMaxAddress, type, pages, &address))) return 0;
  return address;
}

}  // namespace kpack::efi
