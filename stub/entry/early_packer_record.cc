// The packer's record, checked field by field before anything reads it (identity_map.cc maps
// image_size). Runs before relocation.
#include "stub/entry/packer_record_check.h"
#include "stub/entry/stub_image.h"
#include "stub/runtime/linker_symbols.h"

namespace kpack {

StubStatus take_packer_record(BootInputs* inputs) {
  ++inputs->record_checks;
  const auto* record = reinterpret_cast<const PackerRecord*>(__stub_end);
  StubStatus status = check_packer_record(*record, static_cast<uint64_t>(__stub_end - inputs->image_base));
  if (status.ok()) inputs->packer_record = record;
  return status;
}

}  // namespace kpack
