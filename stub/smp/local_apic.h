// The boot CPU's local APIC, just enough to start and stop other processors: INIT and START IPIs
// through the ICR, in xAPIC mode (MMIO at the base MSR 0x1B names, inside the stub's 0..4 GiB
// identity map) or x2APIC mode (MSRs 0x800-0x8FF) when the firmware left it on.
#pragma once

#include <stdint.h>

namespace kpack::smp {

// This CPU's APIC ID from CPUID (leaf 0xB's x2APIC ID when there is one, else leaf 1's 8-bit one):
// right in either APIC mode, and readable on an AP before it knows anything else.
uint32_t current_apic_id();

class LocalApic {
 public:
  // False when the CPU has no APIC or the firmware turned it off (IA32_APIC_BASE.EN clear).
  bool open();
  bool x2apic() const { return x2apic_; }
  uint64_t base() const { return base_; }

  // Software-enables the APIC (SVR bit 8) for sending; close() puts the SVR back as it was.
  void enable();
  void close();

  // INIT with the level asserted, then deasserted (the deassert is what 82489DX-era APICs need;
  // later ones ignore it): the target ends in wait-for-SIPI, as firmware leaves it.
  void send_init_assert(uint32_t apic_id);
  void send_init_deassert(uint32_t apic_id);
  void send_startup(uint32_t apic_id, uint8_t vector);

 private:
  void send(uint32_t apic_id, uint32_t command);
  uint32_t read(uint32_t offset);
  void write(uint32_t offset, uint32_t value);

  uint64_t base_ = 0;
  bool x2apic_ = false;
  uint32_t saved_svr_ = 0;
};

}  // namespace kpack::smp
