// Low pages that hold nothing live: where the application processors' real-mode trampoline may go
// (a START IPI can only name a 4 KiB page below 1 MiB: its vector is the page number), and where
// the switch between 4- and 5-level paging runs (32-bit code and a root table, below 4 GiB).
#pragma once

#include <stdint.h>

#include "stub/machine/boot_environment.h"
#include "formats/boot_params.h"
#include "stub/base/physical_memory.h"
#include "stub/base/range.h"

namespace kpack {

inline constexpr uint64_t kTrampolinePageSize = 4096;
// Page 0 holds the real-mode interrupt table and the BIOS data area; from 0x9F000 up lie the EBDA
// (which may start below its e820 entry's end) and the ROMs.
inline constexpr uint64_t kTrampolineFloor = 0x1000, kTrampolineCeiling = 0x9F000;
// A 16-bit loader puts the kernel's real-mode segment (setup code, heap, boot_params, often the
// command line) in one 64 KiB segment; it is kept whole around boot_params.
inline constexpr uint64_t kRealModeSegmentSize = 0x10000;

// The highest free page: e820 RAM (type 1) in [kTrampolineFloor, kTrampolineCeiling) outside
// `image`, boot_params (and the real-mode segment around it), the command line, the initrd, the
// setup_data nodes, SETUP_INDIRECT targets and EFI memory map below 1 MiB, and what the command
// line reserves (memmap=). False when there is none.
bool find_trampoline_page(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                          uint64_t* page);
// The same for `size` bytes (whole pages), page-aligned.
bool find_low_pages(const boot::BootParams& params, uint64_t params_addr, const BootEnvironment& env, Range image,
                    uint64_t size, uint64_t* base);

// Switching the paging levels: CR4.LA57 changes only with paging off, so from 32-bit code below
// 4 GiB with a root table there too. Two pages: the root table, then the code.
inline constexpr uint64_t kLevelSwitchSize = 2 * kTrampolinePageSize;

// Whether the kernel gets 5-level paging, as the stock decompressor decides: the kernel runs with
// it (CONFIG_X86_5LEVEL: the record says), the CPU has LA57, and the command line has no no5lvl.
bool wants_five_level_paging(bool kernel_five_level, bool cpu_has_la57, bool no5lvl);

// Writes the root table for the other paging mode at `new_root` (4 KiB below 4 GiB), over the same
// identity map: into 5 levels, one entry naming the current PML4 (`current_root`); into 4, a copy of
// the PML4 the current PML5's first entry names (it may lie above 4 GiB). False when a table cannot
// be reached through `memory`.
bool build_switched_root(PhysicalMemory& memory, uint64_t current_root, bool to_five_levels, uint64_t new_root);

}  // namespace kpack
