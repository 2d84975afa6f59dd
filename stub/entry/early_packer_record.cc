// The first C++ the 64-bit entry runs after its exception handlers, before the stub builds page
// tables or relocates itself: nothing may use the packer's record until it is known to be whole
// (identity_map.cc maps image_size). Like identity_map.cc, this must hold no absolute relocation (the build
// checks).
#include "stub/entry/entry_asm.h"
#include "stub/runtime/linker_symbols.h"
#include "stub/arch/halt.h"
#include "stub/entry/confidential_exit.h"
#include "stub/entry/packer_record_check.h"

extern "C" const kpack::PackerRecord* checked_packer_record(uint8_t* image_base) {
  // A confidential VM is refused first, before the stub's own identity map (see confidential_vm.h).
  kpack::refuse_confidential_vm();
  const auto* record = reinterpret_cast<const kpack::PackerRecord*>(__stub_end);
  kpack::StubStatus status = kpack::check_packer_record(*record, static_cast<uint64_t>(__stub_end - image_base));
  if (!status.ok()) kpack::halt_with(status);
  return record;
}
