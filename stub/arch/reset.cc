#include "stub/arch/reset.h"

#include "stub/arch/cpu.h"

namespace kpack {
namespace {

constexpr uint16_t kCmosIndex = 0x70, kCmosData = 0x71;
constexpr uint8_t kCmosSeconds = 0x00, kCmosStatusA = 0x0A;
constexpr uint8_t kUpdateInProgress = 0x80;  // status register A: the clock is changing its registers
constexpr uint16_t kKeyboardStatus = 0x64, kKeyboardCommand = 0x64;
constexpr uint8_t kKeyboardInputFull = 0x02, kKeyboardPulseReset = 0xFE;
constexpr uint16_t kResetControl = 0xCF9;
constexpr uint8_t kResetCpu = 0x04, kFullReset = 0x02;

uint8_t read_cmos(uint8_t index) {
  outb(kCmosIndex, index);
  io_delay();
  return inb(kCmosData);
}

// The seconds register, read outside an update; 0xFF when no clock answers.
uint8_t cmos_seconds() {
  for (uint32_t tries = 0; tries < 1000000 && (read_cmos(kCmosStatusA) & kUpdateInProgress); ++tries) {
  }
  return read_cmos(kCmosSeconds);
}

}  // namespace

void wait_seconds(uint64_t seconds) {
  uint8_t last = cmos_seconds();
  if (last == 0xFF) return;
  // Each tick of the seconds register is one second; the first is a fraction of one.
  for (uint64_t ticks = 0; ticks <= seconds;) {
    uint8_t now = cmos_seconds();
    if (now != last) ++ticks, last = now;
    asm volatile("pause");
  }
}

void reset_machine() {
  asm volatile("cli" ::: "memory");
  for (uint32_t tries = 0; tries < 100000 && (inb(kKeyboardStatus) & kKeyboardInputFull); ++tries) io_delay();
  outb(kKeyboardCommand, kKeyboardPulseReset);
  for (int i = 0; i < 100000; ++i) io_delay();
  outb(kResetControl, kFullReset);
  outb(kResetControl, kFullReset | kResetCpu);
  for (int i = 0; i < 100000; ++i) io_delay();
  // A triple fault: no IDT, then an exception.
  struct [[gnu::packed]] {
    uint16_t limit;
    uint64_t base;
  } empty{0, 0};
  asm volatile("lidt %0; int3" : : "m"(empty) : "memory");
  __builtin_unreachable();
}

}  // namespace kpack
