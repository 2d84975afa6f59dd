// CPU exception reporting: a fault inside the stub (a bug, or a loader breaking the protocol)
// prints one line on COM1 and halts instead of triple-faulting into a silent reset. Handlers use
// GCC's interrupt attribute, so no assembly is needed; this file is built with -mgeneral-regs-only
// as that attribute requires.
#include <stdint.h>

#include "stub/legacy/exceptions.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"

namespace kpack {
namespace {

struct InterruptFrame {
  uint64_t rip;
  uint64_t cs;
  uint64_t rflags;
  uint64_t rsp;
  uint64_t ss;
};

struct [[gnu::packed]] IdtEntry {
  uint16_t offset_low;
  uint16_t selector;
  uint8_t ist;
  uint8_t type;  // present, DPL 0, 64-bit interrupt gate
  uint16_t offset_mid;
  uint32_t offset_high;
  uint32_t reserved;
};
static_assert(sizeof(IdtEntry) == 16);

constexpr int kVectors = 32;
constexpr uint16_t kCodeSelector = 0x10;
constexpr uint8_t kInterruptGate = 0x8E;

alignas(16) IdtEntry idt[kVectors];

// The error code and CR2 go on a line of their own, before the one error report every stub halt
// prints.
[[noreturn]] void report(uint64_t vector, const InterruptFrame* frame, uint64_t error_code) {
  uint64_t cr2;
  asm volatile("mov %%cr2, %0" : "=r"(cr2));
  serial::write("kpack: CPU exception ");
  serial::write_decimal(vector);
  serial::write(", error code ");
  serial::write_hex(error_code);
  serial::write(", cr2 ");
  serial::write_hex(cr2);
  serial::write("\n");
  halt_with(fail("CPU exception in the stub (vector, rip)", vector, frame->rip));
}

#pragma GCC diagnostic ignored "-Wattributes"
#define KPACK_HANDLER(n) \
  [[gnu::interrupt]] void vector_##n(InterruptFrame* frame) { report(n, frame, 0); }
#define KPACK_HANDLER_WITH_CODE(n) \
  [[gnu::interrupt]] void vector_##n(InterruptFrame* frame, uint64_t code) { report(n, frame, code); }

// One handler per vector, laid out as a table.
// clang-format off
KPACK_HANDLER(0); KPACK_HANDLER(1); KPACK_HANDLER(2); KPACK_HANDLER(3); KPACK_HANDLER(4); KPACK_HANDLER(5);
KPACK_HANDLER(6); KPACK_HANDLER(7); KPACK_HANDLER_WITH_CODE(8); KPACK_HANDLER(9); KPACK_HANDLER_WITH_CODE(10);
KPACK_HANDLER_WITH_CODE(11); KPACK_HANDLER_WITH_CODE(12); KPACK_HANDLER_WITH_CODE(13);
KPACK_HANDLER_WITH_CODE(14); KPACK_HANDLER(15); KPACK_HANDLER(16); KPACK_HANDLER_WITH_CODE(17);
KPACK_HANDLER(18); KPACK_HANDLER(19); KPACK_HANDLER(20); KPACK_HANDLER_WITH_CODE(21); KPACK_HANDLER(22);
KPACK_HANDLER(23); KPACK_HANDLER(24); KPACK_HANDLER(25); KPACK_HANDLER(26); KPACK_HANDLER(27);
KPACK_HANDLER(28); KPACK_HANDLER_WITH_CODE(29); KPACK_HANDLER_WITH_CODE(30); KPACK_HANDLER(31);
// clang-format on

void set_gate(int vector, const void* handler) {
  uint64_t address = reinterpret_cast<uint64_t>(handler);
  idt[vector] = IdtEntry{static_cast<uint16_t>(address),
                         kCodeSelector,
                         0,
                         kInterruptGate,
                         static_cast<uint16_t>(address >> 16),
                         static_cast<uint32_t>(address >> 32),
                         0};
}

}  // namespace

void install_exception_handlers() {
  const void* handlers[kVectors] = {
      reinterpret_cast<const void*>(vector_0),  reinterpret_cast<const void*>(vector_1),
      reinterpret_cast<const void*>(vector_2),  reinterpret_cast<const void*>(vector_3),
      reinterpret_cast<const void*>(vector_4),  reinterpret_cast<const void*>(vector_5),
      reinterpret_cast<const void*>(vector_6),  reinterpret_cast<const void*>(vector_7),
      reinterpret_cast<const void*>(vector_8),  reinterpret_cast<const void*>(vector_9),
      reinterpret_cast<const void*>(vector_10), reinterpret_cast<const void*>(vector_11),
      reinterpret_cast<const void*>(vector_12), reinterpret_cast<const void*>(vector_13),
      reinterpret_cast<const void*>(vector_14), reinterpret_cast<const void*>(vector_15),
      reinterpret_cast<const void*>(vector_16), reinterpret_cast<const void*>(vector_17),
      reinterpret_cast<const void*>(vector_18), reinterpret_cast<const void*>(vector_19),
      reinterpret_cast<const void*>(vector_20), reinterpret_cast<const void*>(vector_21),
      reinterpret_cast<const void*>(vector_22), reinterpret_cast<const void*>(vector_23),
      reinterpret_cast<const void*>(vector_24), reinterpret_cast<const void*>(vector_25),
      reinterpret_cast<const void*>(vector_26), reinterpret_cast<const void*>(vector_27),
      reinterpret_cast<const void*>(vector_28), reinterpret_cast<const void*>(vector_29),
      reinterpret_cast<const void*>(vector_30), reinterpret_cast<const void*>(vector_31),
  };
  for (int v = 0; v < kVectors; ++v) set_gate(v, handlers[v]);
  load_exception_handlers();
}

void load_exception_handlers() {
  struct [[gnu::packed]] {
    uint16_t limit;
    uint64_t base;
  } descriptor{sizeof(idt) - 1, reinterpret_cast<uint64_t>(idt)};
  asm volatile("lidt %0" : : "m"(descriptor));
}

}  // namespace kpack
