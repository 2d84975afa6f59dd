// The stub is a static PIE linked at 0: before anything holds a pointer, its own
// R_X86_64_RELATIVE relocations are applied for the address it runs at. The build
// (check_relocations.sh) makes sure no other kind exists. Then the codec libraries' static
// constructors run, as a C runtime would run them (none today; liblzma 5.4 had one, for CRC64).
#include <stdint.h>

#include "formats/elf64.h"
#include "stub/arch/halt.h"
#include "stub/entry/stub_image.h"
#include "stub/runtime/linker_symbols.h"

namespace kpack {

void relocate_stub(BootInputs* inputs) {
  ++inputs->relocation_passes;
  uint8_t* base = inputs->image_base;
  const auto* begin = reinterpret_cast<const elf::Rela*>(__rela_start);
  const auto* end = reinterpret_cast<const elf::Rela*>(__rela_end);
  for (const elf::Rela* r = begin; r < end; ++r) {
    if (static_cast<uint32_t>(r->info) != elf::kRX86_64Relative)
      halt_with(fail("the stub holds a relocation it cannot apply", r->info, r->offset));
    *reinterpret_cast<uint64_t*>(base + r->offset) = reinterpret_cast<uint64_t>(base) + r->addend;
  }
  for (auto* constructor = __init_array_start; constructor < __init_array_end; ++constructor) (*constructor)();
}

}  // namespace kpack
