// The 16-bit setup's view of the machine: BIOS services and memory outside its own
// segment. Real mode only: everything here assumes CS = DS = ES = SS = the setup segment.
#pragma once

#include <stdint.h>

namespace kpack::setup16 {

// Every register a BIOS service may read or write, in the order entry16.S pops them (popal, then
// the segment registers, then the flags) so a call is a copy onto the stack and back.
struct BiosRegs {
  uint32_t edi, esi, ebp, unused_esp, ebx, edx, ecx, eax;
  uint16_t gs, fs, es, ds;
  uint32_t eflags;

  uint8_t al() const { return static_cast<uint8_t>(eax); }
  uint8_t ah() const { return static_cast<uint8_t>(eax >> 8); }
  uint16_t ax() const { return static_cast<uint16_t>(eax); }
  uint8_t bl() const { return static_cast<uint8_t>(ebx); }
  uint8_t bh() const { return static_cast<uint8_t>(ebx >> 8); }
  uint16_t bx() const { return static_cast<uint16_t>(ebx); }
  uint8_t cl() const { return static_cast<uint8_t>(ecx); }
  uint8_t ch() const { return static_cast<uint8_t>(ecx >> 8); }
  uint16_t cx() const { return static_cast<uint16_t>(ecx); }
  uint8_t dl() const { return static_cast<uint8_t>(edx); }
  uint8_t dh() const { return static_cast<uint8_t>(edx >> 8); }
  uint16_t dx() const { return static_cast<uint16_t>(edx); }
  uint16_t di() const { return static_cast<uint16_t>(edi); }
  bool carry() const { return eflags & 1; }
};
static_assert(sizeof(BiosRegs) == 44, "entry16.S copies BIOS_REGS_SIZE bytes");

inline uint16_t data_segment() {
  uint16_t segment;
  asm("movw %%ds, %0" : "=rm"(segment));
  return segment;
}

// Registers for a call: our own segments, and the carry flag set so a BIOS that does not know the
// service (and returns without touching the flags) reads as a failure.
inline BiosRegs bios_regs() {
  BiosRegs regs{};
  regs.ds = regs.es = regs.fs = regs.gs = data_segment();
  regs.eflags = 1;
  return regs;
}

// INT vector with `in` loaded; the registers afterwards go to `out` (may be null).
extern "C" void bios_call(uint8_t vector, const BiosRegs* in, BiosRegs* out);
inline BiosRegs bios_call(uint8_t vector, const BiosRegs& in) {
  BiosRegs out;
  bios_call(vector, &in, &out);
  return out;
}

// The 16-bit offset of an object of ours, for a BIOS that takes ES:DI and the like.
inline uint16_t offset_of(const void* object) { return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(object)); }
// Its linear address, for the 32-bit code that runs after us.
inline uint32_t linear_address(const void* object) {
  return (static_cast<uint32_t>(data_segment()) << 4) + offset_of(object);
}

// Memory outside our segment (the BIOS data area, the text screen, the command line) through FS.
inline void set_fs(uint16_t segment) { asm volatile("movw %0, %%fs" : : "rm"(segment)); }
inline uint8_t read_fs8(uint16_t offset) {
  uint8_t value;
  asm volatile("movb %%fs:(%1), %0" : "=q"(value) : "r"(static_cast<uint32_t>(offset)) : "memory");
  return value;
}
inline uint16_t read_fs16(uint16_t offset) {
  uint16_t value;
  asm volatile("movw %%fs:(%1), %0" : "=r"(value) : "r"(static_cast<uint32_t>(offset)) : "memory");
  return value;
}
inline uint32_t read_fs32(uint16_t offset) {
  uint32_t value;
  asm volatile("movl %%fs:(%1), %0" : "=r"(value) : "r"(static_cast<uint32_t>(offset)) : "memory");
  return value;
}
inline void write_fs16(uint16_t offset, uint16_t value) {
  asm volatile("movw %0, %%fs:(%1)" : : "r"(value), "r"(static_cast<uint32_t>(offset)) : "memory");
}
inline void write_fs32(uint16_t offset, uint32_t value) {
  asm volatile("movl %0, %%fs:(%1)" : : "r"(value), "r"(static_cast<uint32_t>(offset)) : "memory");
}
// The same through GS, for the A20 test that compares two aliases of one address.
inline uint32_t read_gs32(uint16_t segment, uint16_t offset) {
  uint32_t value;
  asm volatile("movw %1, %%gs\n\tmovl %%gs:(%2), %0"
               : "=r"(value)
               : "rm"(segment), "r"(static_cast<uint32_t>(offset))
               : "memory");
  return value;
}

}  // namespace kpack::setup16
