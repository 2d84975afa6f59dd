// The stub's one view of the x86 CPU: instructions as inline functions, and the control-register,
// EFER and MSR bits by name. Every mode includes it (the 64-bit stub, the 16-bit setup built
// -m16 -march=i386, the engine, which the host builds too), so it holds inline asm only; an
// instruction a mode never calls is never emitted for it. gen_asm_offsets.cc prints the bit names
// for the assembly.
#pragma once

#include <stdint.h>

namespace kpack {

// Control register and EFER bits (Intel SDM vol. 3, 2.5 and 2.2.1).
inline constexpr uint32_t kCr0Pe = 1u << 0, kCr0Mp = 1u << 1, kCr0Em = 1u << 2, kCr0Et = 1u << 4, kCr0Ne = 1u << 5,
                          kCr0Pg = 1u << 31;
inline constexpr uint32_t kCr4Pae = 1u << 5, kCr4Osfxsr = 1u << 9, kCr4Osxmmexcpt = 1u << 10, kCr4La57 = 1u << 12,
                          kCr4Osxsave = 1u << 18;
inline constexpr uint32_t kEferLme = 1u << 8, kEferNxe = 1u << 11;
inline constexpr uint32_t kEflagsId = 1u << 21;  // writable only where CPUID exists

// Model-specific registers.
inline constexpr uint32_t kMsrEfer = 0xC0000080;
inline constexpr uint32_t kMsrFsBase = 0xC0000100;
inline constexpr uint32_t kMsrSevStatus = 0xC0010131;  // AMD: exists where CPUID 0x8000001F EAX bit 1 is set
inline constexpr uint32_t kMsrSevEsGhcb = 0xC0010130;  // SEV-ES/SNP: the GHCB, or an MSR-protocol request

struct CpuidResult {
  uint32_t eax, ebx, ecx, edx;
};

inline CpuidResult cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidResult r;
  asm volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(subleaf));
  return r;
}

// The CPU itself, for code that also runs on recorded answers in the host's tests.
struct ThisCpu {
  CpuidResult cpuid(uint32_t leaf, uint32_t subleaf) const { return kpack::cpuid(leaf, subleaf); }
  uint64_t read_msr(uint32_t msr) const;
};

inline uint64_t rdtsc() {
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return lo | uint64_t{hi} << 32;
}

inline uint64_t read_msr(uint32_t msr) {
  uint32_t lo, hi;
  asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
  return lo | uint64_t{hi} << 32;
}

inline uint64_t ThisCpu::read_msr(uint32_t msr) const { return kpack::read_msr(msr); }

inline void write_msr(uint32_t msr, uint64_t value) {
  asm volatile("wrmsr" : : "c"(msr), "a"(static_cast<uint32_t>(value)), "d"(static_cast<uint32_t>(value >> 32)));
}

inline uint64_t read_cr3() {
  uint64_t value;
  asm volatile("mov %%cr3, %0" : "=r"(value));
  return value;
}
// Flushes the TLB's non-global entries as it reloads the same page tables.
inline void write_cr3(uint64_t value) { asm volatile("mov %0, %%cr3" : : "r"(value) : "memory"); }
inline uint64_t read_cr4() {
  uint64_t cr4;
  asm volatile("mov %%cr4, %0" : "=r"(cr4));
  return cr4;
}

// XCR0, the state components XSAVE manages; defined only once CR4.OSXSAVE is set.
inline uint64_t read_xcr0() {
  uint32_t lo, hi;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return lo | uint64_t{hi} << 32;
}

inline void write_xcr0(uint64_t value) {
  asm volatile("xsetbv" : : "a"(static_cast<uint32_t>(value)), "d"(static_cast<uint32_t>(value >> 32)), "c"(0));
}

// Where %fs points: Debian's codec libraries, built with -fstack-protector, read their canary at
// %fs:0x28, on every CPU that runs them.
inline void set_fs_base(const void* base) { write_msr(kMsrFsBase, reinterpret_cast<uintptr_t>(base)); }

inline void outb(uint16_t port, uint8_t value) { asm volatile("outb %0, %1" : : "a"(value), "Nd"(port)); }
inline void outw(uint16_t port, uint16_t value) { asm volatile("outw %0, %1" : : "a"(value), "Nd"(port)); }
inline uint8_t inb(uint16_t port) {
  uint8_t value;
  asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}

// SEV-ES/SNP: hands the GHCB MSR's request to the hypervisor (VMGEXIT).
inline void vmgexit() { asm volatile("rep; vmmcall" : : : "memory"); }

// A TDX guest's TDG.VP.VMCALL (TDCALL leaf 0): the registers in and, from the VMM, out.
struct TdVmCallRegisters {
  uint64_t rcx, r10, r11, r12, r13, r14, r15, rbx, rdi, rsi, r8, r9, rdx;
};

#if defined(__x86_64__)
inline void tdvmcall(TdVmCallRegisters& regs) {
  register uint64_t r8 asm("r8") = regs.r8, r9 asm("r9") = regs.r9, r10 asm("r10") = regs.r10,
                       r11 asm("r11") = regs.r11, r12 asm("r12") = regs.r12, r13 asm("r13") = regs.r13,
                       r14 asm("r14") = regs.r14, r15 asm("r15") = regs.r15;
  uint64_t leaf = 0;
  asm volatile(".byte 0x66, 0x0f, 0x01, 0xcc"  // tdcall, which older assemblers lack
               : "+a"(leaf), "+c"(regs.rcx), "+d"(regs.rdx), "+b"(regs.rbx), "+S"(regs.rsi), "+D"(regs.rdi), "+r"(r8),
                 "+r"(r9), "+r"(r10), "+r"(r11), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15)
               :
               : "memory");
  regs.r8 = r8, regs.r9 = r9, regs.r10 = r10, regs.r11 = r11, regs.r12 = r12, regs.r13 = r13, regs.r14 = r14,
  regs.r15 = r15;
}
#endif

// A write to the POST port: a short, fixed delay between accesses to slow legacy devices.
inline void io_delay() { outb(0x80, 0); }

// The stub's every halt, in every mode: interrupts off, so only NMI, SMI or INIT (an AP parked by
// the boot CPU) ever wakes it, and then it halts again.
[[noreturn]] inline void halt() {
  for (;;) asm volatile("cli; hlt");
}

}  // namespace kpack
