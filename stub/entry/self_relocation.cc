// The stub is a static PIE linked at 0: before anything holds a pointer, its own
// R_X86_64_RELATIVE relocations are applied for the address it runs at. The build
// (check_relocations.sh) makes sure no other kind exists. Then the codec libraries' static
// constructors run, as a C runtime would run them (none today; liblzma 5.4 had one, for CRC64).
#include <stdint.h>

#include "formats/elf64.h"
#include "stub/entry/entry_asm.h"
#include "stub/runtime/linker_symbols.h"
#include "stub/arch/halt.h"

using kpack::elf::Rela;

// Where the relocations were applied (0: not yet). The EFI entries apply them, then hand over to
// the 64-bit entry, which calls this again for the same address: adding the base twice would
// break every pointer. Zero in the image file, and an integer, so it needs no relocation itself.
static uint64_t relocated_for = 0;

extern "C" void apply_relocations(uint8_t* base) {
  if (relocated_for == reinterpret_cast<uint64_t>(base)) return;
  relocated_for = reinterpret_cast<uint64_t>(base);
  const auto* begin = reinterpret_cast<const Rela*>(__rela_start);
  const auto* end = reinterpret_cast<const Rela*>(__rela_end);
  for (const Rela* r = begin; r < end; ++r) {
    if (static_cast<uint32_t>(r->info) != kpack::elf::kRX86_64Relative)
      kpack::halt_with(kpack::fail("the stub holds a relocation it cannot apply", r->info, r->offset));
    *reinterpret_cast<uint64_t*>(base + r->offset) = reinterpret_cast<uint64_t>(base) + r->addend;
  }
  for (auto* constructor = __init_array_start; constructor < __init_array_end; ++constructor) (*constructor)();
}
