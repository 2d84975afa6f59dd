// Linux's random seed configuration table, as the Linux EFI stub leaves it (efi_random_get_seed in
// drivers/firmware/efi/libstub/random.c): 32 fresh bytes from EFI_RNG_PROTOCOL followed by the seed
// an earlier stage left, if any, in a new table the kernel reads early (and kexec keeps: ACPI
// reclaim memory). The old seed is wiped once the new table is in.
#include "stub/efi/efi_boot.h"

namespace kpack::efi {
namespace {

// Raw entropy when the firmware offers it, its default algorithm otherwise.
EfiStatus fresh_bytes(Rng* rng, uint8_t* bytes) {
  EfiStatus status = rng->get_rng(rng, &kRngAlgorithmRaw, kRandomSeedSize, bytes);
  if (status == kUnsupported) status = rng->get_rng(rng, nullptr, kRandomSeedSize, bytes);
  return status;
}

void wipe(void* bytes, uint64_t size) {
  __builtin_memset(bytes, 0, size);
  asm volatile("" : : "r"(bytes) : "memory");  // the compiler may not drop the stores
}

}  // namespace

void install_random_seed(const Firmware& fw) {
  Rng* rng = locate_protocol<Rng, kRngProtocol>(fw);
  if (!rng) return;
  auto* earlier = static_cast<LinuxRandomSeed*>(const_cast<void*>(firmware_table(fw, kLinuxRandomSeedTable)));
  uint32_t kept = earlier && earlier->size <= kRandomSeedMaxKept ? earlier->size : 0;
  uint64_t size = sizeof(LinuxRandomSeed) + kRandomSeedSize + kept;
  void* buffer = nullptr;
  if (failed(fw.boot->allocate_pool(kAcpiReclaimMemory, size, &buffer))) return;
  auto* seed = static_cast<LinuxRandomSeed*>(buffer);
  if (failed(fresh_bytes(rng, seed->bits))) {
    wipe(seed, size);
    fw.boot->free_pool(seed);
    return;
  }
  seed->size = kRandomSeedSize + kept;
  if (kept) __builtin_memcpy(seed->bits + kRandomSeedSize, earlier->bits, kept);
  if (failed(fw.boot->install_configuration_table(&kLinuxRandomSeedTable, seed))) {
    wipe(seed, size);
    fw.boot->free_pool(seed);
    return;
  }
  if (!kept) return;
  wipe(earlier->bits, kept);
  fw.boot->free_pool(earlier);
}

}  // namespace kpack::efi
