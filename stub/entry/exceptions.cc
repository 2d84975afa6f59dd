// CPU exception reporting: a fault inside the stub (a bug, or a loader breaking the protocol)
// prints one line on COM1 and halts instead of triple-faulting into a silent reset. Handlers use
// GCC's interrupt attribute, so no assembly is needed; this file is built with -mgeneral-regs-only
// as that attribute requires. entry64.S installs them first, before relocation and before SSE:
// under SEV-ES/SNP and TDX the first CPUID raises #VC or #VE, which only these answer.
#include <stdint.h>

#include "stub/entry/exceptions.h"
#include "stub/entry/entry_asm.h"
#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/entry/confidential_vm.h"
#include "stub/entry/confidential_exit.h"

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
constexpr uint16_t kCodeSelector = 0x10;  // BOOT_CS: entry64.S loads the boot GDT first
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

// Each handler under a plain symbol name, for the table of offsets below.
#pragma GCC diagnostic ignored "-Wattributes"
#define KPACK_DECLARE(n, ...) [[gnu::interrupt, gnu::used]] void vector_##n(__VA_ARGS__) asm("kpack_vector_" #n)
#define KPACK_HANDLER(n)                   \
  KPACK_DECLARE(n, InterruptFrame* frame); \
  void vector_##n(InterruptFrame* frame) { report(n, frame, 0); }
#define KPACK_HANDLER_WITH_CODE(n)                        \
  KPACK_DECLARE(n, InterruptFrame* frame, uint64_t code); \
  void vector_##n(InterruptFrame* frame, uint64_t code) { report(n, frame, code); }

// One handler per vector, laid out as a table; #VE (20) and #VC (29) below.
// clang-format off
KPACK_HANDLER(0); KPACK_HANDLER(1); KPACK_HANDLER(2); KPACK_HANDLER(3); KPACK_HANDLER(4); KPACK_HANDLER(5);
KPACK_HANDLER(6); KPACK_HANDLER(7); KPACK_HANDLER_WITH_CODE(8); KPACK_HANDLER(9); KPACK_HANDLER_WITH_CODE(10);
KPACK_HANDLER_WITH_CODE(11); KPACK_HANDLER_WITH_CODE(12); KPACK_HANDLER_WITH_CODE(13);
KPACK_HANDLER_WITH_CODE(14); KPACK_HANDLER(15); KPACK_HANDLER(16); KPACK_HANDLER_WITH_CODE(17);
KPACK_HANDLER(18); KPACK_HANDLER(19); KPACK_HANDLER_WITH_CODE(21); KPACK_HANDLER(22);
KPACK_HANDLER(23); KPACK_HANDLER(24); KPACK_HANDLER(25); KPACK_HANDLER(26); KPACK_HANDLER(27);
KPACK_HANDLER(28); KPACK_HANDLER_WITH_CODE(30); KPACK_HANDLER(31);
// clang-format on

// #VE: a TDX guest, whose COM1 and HLT would each raise another; the hypercalls carry the line.
// Leaf 0x21 is the TDX module's own, never a #VE.
KPACK_DECLARE(20, InterruptFrame* frame);
void vector_20(InterruptFrame* frame) {
  CpuidResult tdx = cpuid(kCpuidTdxLeaf);
  if (is_tdx_signature(tdx.ebx, tdx.ecx, tdx.edx))
    halt_tdx_guest(fail("TDX guest needs the EFI entry (#VE at rip)", frame->rip));
  report(20, frame, 0);
}

// #VC: only an SEV-ES or SEV-SNP guest gets one, and COM1 would raise the next: the termination
// request names the reason instead.
KPACK_DECLARE(29, InterruptFrame* frame, uint64_t code);
void vector_29(InterruptFrame*, uint64_t) { terminate_sev_es_guest(); }

// Where each handler is, as an offset from the table itself: a table of addresses would need
// relocating, and entry64.S installs the handlers before the stub relocates itself.
asm(R"(
	.pushsection .rodata.exception_handler_offsets, "a"
	.balign 4
exception_handler_offsets:
	.irp vector, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.long kpack_vector_\vector - exception_handler_offsets
	.endr
	.popsection
)");

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

}  // namespace kpack

extern "C" const int32_t exception_handler_offsets[kpack::kVectors] __attribute__((visibility("hidden")));

void install_exception_handlers() {
  using namespace kpack;
  const auto* table = reinterpret_cast<const uint8_t*>(exception_handler_offsets);
  for (int v = 0; v < kVectors; ++v) set_gate(v, table + exception_handler_offsets[v]);
  load_exception_handlers();
}

namespace kpack {

void load_exception_handlers() {
  struct [[gnu::packed]] {
    uint16_t limit;
    uint64_t base;
  } descriptor{sizeof(idt) - 1, reinterpret_cast<uint64_t>(idt)};
  asm volatile("lidt %0" : : "m"(descriptor));
}

}  // namespace kpack
