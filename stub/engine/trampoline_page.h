// Where the application processors' real-mode trampoline may go: a START IPI can only name a 4 KiB
// page below 1 MiB (its vector is the page number), and that page must hold nothing live.
#pragma once

#include <stdint.h>

#include "stub/engine/boot_environment.h"
#include "formats/boot_params.h"
#include "stub/engine/range.h"

namespace kpack {

inline constexpr uint64_t kTrampolinePageSize = 4096;
// Page 0 holds the real-mode interrupt table and the BIOS data area; from 0x9F000 up lie the EBDA
// (which may start below its e820 entry's end) and the ROMs.
inline constexpr uint64_t kTrampolineFloor = 0x1000, kTrampolineCeiling = 0x9F000;
// A 16-bit loader puts the kernel's real-mode segment (setup code, heap, boot_params, often the
// command line) in one 64 KiB segment; it is kept whole around boot_params.
inline constexpr uint64_t kRealModeSegmentSize = 0x10000;

// The highest free page: e820 RAM (type 1) in [kTrampolineFloor, kTrampolineCeiling) outside
// `image`, boot_params (and the real-mode segment around it), the command line and the initrd.
// False when there is none.
bool find_trampoline_page(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                          uint64_t* page);

}  // namespace kpack
