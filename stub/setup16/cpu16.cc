// The CPU check: the features an x86-64 kernel cannot start without (the kernel's
// required-features.h for CONFIG_X86_64), tested before anything else runs.
#include "stub/arch/cpu.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

// EFLAGS.ID can be toggled only where CPUID exists (not on a 386 or an early 486).
bool has_cpuid() {
  uint32_t before, after;
  asm volatile(
      "pushfl\n\t"
      "popl %0\n\t"
      "movl %0, %1\n\t"
      "xorl %2, %1\n\t"
      "pushl %1\n\t"
      "popfl\n\t"
      "pushfl\n\t"
      "popl %1\n\t"
      "pushl %0\n\t"
      "popfl"
      : "=&r"(before), "=&r"(after)
      : "i"(kEflagsId));
  return (before ^ after) & kEflagsId;
}

struct Feature {
  bool extended;  // CPUID 0x80000001 rather than 1
  uint8_t edx_bit;
  const char* name;  // as /proc/cpuinfo spells it
};
constexpr Feature kRequired[] = {
    {false, 0, "fpu"},   {false, 5, "msr"},   {false, 6, "pae"},  {false, 8, "cx8"},   {false, 13, "pge"},
    {false, 15, "cmov"}, {false, 24, "fxsr"}, {false, 25, "sse"}, {false, 26, "sse2"}, {true, 29, "lm"},
};

void append(char* text, size_t size, const char* more) {
  size_t at = 0;
  while (text[at]) ++at;
  while (*more && at + 1 < size) text[at++] = *more++;
  text[at] = 0;
}

}  // namespace

uint32_t check_cpu() {
  uint32_t standard = 0, extended = 0, family = 0;
  if (has_cpuid()) {
    if (cpuid(0).eax >= 1) {
      CpuidResult signature = cpuid(1);
      standard = signature.edx;
      family = (signature.eax >> 8) & 0xF;
    }
    if (cpuid(0x80000000).eax >= 0x80000001) extended = cpuid(0x80000001).edx;
  }
  char message[96] = "this CPU cannot run this kernel: missing";
  bool missing = false;
  for (const Feature& f : kRequired) {
    if (((f.extended ? extended : standard) >> f.edx_bit) & 1) continue;
    append(message, sizeof(message), " ");
    append(message, sizeof(message), f.name);
    missing = true;
  }
  if (missing) halt_setup(message);
  return family;
}

}  // namespace kpack::setup16
