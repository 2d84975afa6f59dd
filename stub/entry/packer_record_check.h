// The packer's record (PackerRecord, formats/kpack_image.h) as the entries meet it: checked field by
// field before anything uses it. Runs before the stub relocates itself (early_packer_record.cc, from every entry), and on
// the host where `kpack info` and `kpack extract` read a kpack image.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/base/status.h"

namespace kpack {

// `record_offset` is where the record sits in the protected-mode part: right after the stub's code,
// data, stack and page tables, which therefore occupy [0, record_offset). Checks the magic, the
// version, the codec, that the image holds the stub, the record and the payload, and the alignment.
StubStatus check_packer_record(const PackerRecord& info, uint64_t record_offset);

}  // namespace kpack
