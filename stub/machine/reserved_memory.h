// The memory the kernel command line keeps from the kernel (memmap= regions, memmap=exactmap,
// mem=), taken out of a free set before the stub places anything there: its work area, its run
// report, the kernel with or without KASLR, and its low pages. The stock decompressor writes only
// inside init_size; kpack's stub writes beyond it, so it must never write where the kernel will
// not look (ramoops' crash log of the last boot, pmem, memory left to something else).
#pragma once

#include "stub/base/status.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/free_memory.h"
#include "stub/options/kaslr_options.h"

namespace kpack {

// Removes from `free` every reserved range and everything from the memory limit up; with exactmap,
// everything outside its RAM ranges. Fails when the command line named more ranges than the stub
// keeps (kMaxReservedRanges): it could not keep clear of them.
StubStatus remove_reserved_memory(const KaslrOptions& options, FreeMemory& free);

// The same for a boot's environment, once the stub has read its options: out of free memory, and
// named to the low pages' search (env.command_line_memory points at `options`, which must outlive
// it). What boot_kernel does before anything is placed.
StubStatus keep_command_line_memory(const KaslrOptions& options, BootEnvironment& env);

}  // namespace kpack
