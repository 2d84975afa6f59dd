// The packer's record (PackerRecord, formats/kpack_image.h) turned into the one engine run that
// the stub, `kpack info`'s placement report and the host benchmark all make.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/machine/free_memory.h"
#include "stub/base/physical_memory.h"
#include "stub/base/status.h"
#include "stub/unpack/unpack.h"

namespace kpack {

// Unpacks the kernel of the protected-mode part loaded at `image_base`, randomized as `kaslr` asks
// (a raw image moves to a random slot only if its record says so). The record has passed
// check_packer_record (stub/entry/packer_record_check.h): every entry checks it first, and so do the
// packer's readers.
StubStatus unpack_from_packer_record(const PackerRecord& info, uint64_t image_base, const KaslrRequest& kaslr,
                                     const FreeMemory& free, PhysicalMemory& memory, UnpackTrace& trace,
                                     UnpackResult* result, FrameWorkers* workers = nullptr, uint32_t max_workers = 0);

}  // namespace kpack
