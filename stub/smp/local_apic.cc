#include "stub/smp/local_apic.h"

#include "stub/arch/cpu.h"

namespace kpack::smp {
namespace {

constexpr uint32_t kMsrApicBase = 0x1B;
constexpr uint64_t kApicBaseX2apic = 1u << 10, kApicBaseEnabled = 1u << 11;
constexpr uint64_t kApicBaseAddressMask = 0x000FFFFFFFFFF000ull;
constexpr uint32_t kX2apicMsrBase = 0x800;  // register offset >> 4 is the MSR's index from here

// Register offsets (Intel SDM vol. 3, table 11-1).
constexpr uint32_t kSvr = 0x0F0, kIcrLow = 0x300, kIcrHigh = 0x310;
constexpr uint32_t kSvrEnabled = 1u << 8, kSpuriousVector = 0xFF;
// ICR fields.
constexpr uint32_t kDeliveryInit = 5u << 8, kDeliveryStartup = 6u << 8;
constexpr uint32_t kLevelAssert = 1u << 14, kTriggerLevel = 1u << 15, kDeliveryPending = 1u << 12;
// A send that is still pending after this many polls is given up on; the AP it was for then
// simply does not check in.
constexpr uint32_t kIcrPolls = 1000000;

}  // namespace

uint32_t current_apic_id() {
  if (cpuid(0).eax >= 0xB) {
    CpuidResult topology = cpuid(0xB, 0);
    if (topology.ebx) return topology.edx;  // leaf 0xB is implemented: EDX is the x2APIC ID
  }
  return cpuid(1).ebx >> 24;
}

bool LocalApic::open() {
  if (!(cpuid(1).edx & (1u << 9))) return false;  // no APIC: MSR 0x1B may not even exist
  uint64_t msr = read_msr(kMsrApicBase);
  if (!(msr & kApicBaseEnabled)) return false;
  x2apic_ = msr & kApicBaseX2apic;
  base_ = msr & kApicBaseAddressMask;
  return x2apic_ || base_ < (1ull << 32);  // xAPIC MMIO must be inside the identity map
}

uint32_t LocalApic::read(uint32_t offset) {
  if (x2apic_) return static_cast<uint32_t>(read_msr(kX2apicMsrBase + (offset >> 4)));
  return *reinterpret_cast<volatile uint32_t*>(base_ + offset);
}

void LocalApic::write(uint32_t offset, uint32_t value) {
  if (x2apic_)
    write_msr(kX2apicMsrBase + (offset >> 4), value);
  else
    *reinterpret_cast<volatile uint32_t*>(base_ + offset) = value;
}

void LocalApic::enable() {
  saved_svr_ = read(kSvr);
  if (!(saved_svr_ & kSvrEnabled)) write(kSvr, kSvrEnabled | kSpuriousVector);
}

void LocalApic::close() { write(kSvr, saved_svr_); }

void LocalApic::send(uint32_t apic_id, uint32_t command) {
  if (x2apic_) {
    // One 64-bit write; x2APIC has no delivery-status bit to wait on.
    write_msr(kX2apicMsrBase + (kIcrLow >> 4), uint64_t{apic_id} << 32 | command);
    return;
  }
  write(kIcrHigh, apic_id << 24);
  write(kIcrLow, command);  // this write sends
  for (uint32_t i = 0; i < kIcrPolls && (read(kIcrLow) & kDeliveryPending); ++i) asm volatile("pause");
}

void LocalApic::send_init_assert(uint32_t apic_id) { send(apic_id, kDeliveryInit | kTriggerLevel | kLevelAssert); }
void LocalApic::send_init_deassert(uint32_t apic_id) { send(apic_id, kDeliveryInit | kTriggerLevel); }
void LocalApic::send_startup(uint32_t apic_id, uint8_t vector) { send(apic_id, kDeliveryStartup | vector); }

}  // namespace kpack::smp
