// The kpack record (StubRecord, formats/kpack_image.h) as the stub meets it: checked field by field
// before anything uses it, and turned into the one engine run that the stub, `kpack info`'s
// placement report and the host benchmark all make.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/engine/free_memory.h"
#include "stub/engine/physical_memory.h"
#include "stub/engine/status.h"
#include "stub/engine/unpack.h"

namespace kpack {

// `record_offset` is where the record sits in the protected-mode part: right after the stub's code,
// data, stack and page tables, which therefore occupy [0, record_offset). Checks the magic, the
// version, the codec, that the image holds the stub, the record and the payload, and the alignment.
StubStatus check_stub_record(const StubRecord& info, uint64_t record_offset);

// Checks the record, then unpacks the kernel of the protected-mode part loaded at `image_base`,
// randomized as `kaslr` asks (a raw image moves to a random slot only if its record says so).
StubStatus unpack_from_record(const StubRecord& info, uint64_t record_offset, uint64_t image_base,
                              const KaslrRequest& kaslr, const FreeMemory& free, PhysicalMemory& memory,
                              UnpackTrace& trace, UnpackResult* result, FrameWorkers* workers = nullptr,
                              uint32_t max_workers = 0);

}  // namespace kpack
