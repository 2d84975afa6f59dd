// The paging mode the kernel starts in. Its startup_64 keeps the one it finds (CR4.LA57), so the
// stub picks what the stock decompressor would, and switches to it just before the kernel.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/base/status.h"
#include "stub/options/stub_options.h"

namespace kpack {

// wants_five_level_paging for this kernel (the record), this CPU (CPUID) and the command line (no5lvl).
bool kernel_wants_five_levels(const PackerRecord& record, const StubOptions& options);
bool five_level_paging_on();
// Into the other paging mode, over the identity map that is live: `low_pages` are
// kLevelSwitchSize bytes below 4 GiB that hold nothing live. Loads the boot GDT.
StubStatus switch_paging_levels(bool five_levels, uint64_t low_pages);

}  // namespace kpack
