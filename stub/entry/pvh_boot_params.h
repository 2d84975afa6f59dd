// The PVH entry's boot_params, made of hvm_start_info as the kernel's own PVH code makes its
// pvh_bootparams (arch/x86/platform/pvh/enlighten.c, init_pvh_bootparams): the memory map as e820
// plus the ISA range reserved, the command line, the first module as the initrd, boot protocol
// 2.12 and a non-Xen loader type. Besides, what the stub and the kernel read through the
// bzImage's startup_64 that the PVH path passes another way: the RSDP (the kernel's PVH code hands
// it over through x86_init.acpi.get_root_pointer) and cmdline_size (the stub reads the command line
// up to it). Pure, so the host tests it; it runs before the stub relocates itself.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/pvh.h"
#include "stub/base/status.h"

namespace kpack {

inline constexpr uint16_t kPvhBootProtocol = 0x020C;   // what init_pvh_bootparams writes
inline constexpr uint8_t kPvhLoaderType = 0xB0;        // (0xb << 4): a PVH loader that is not Xen
inline constexpr uint32_t kPvhCommandLineSize = 2047;  // the kernel's COMMAND_LINE_SIZE, less the NUL

// Whether hvm_start_info can be turned into boot_params: its magic, a memory map (version 1, as
// every VMM but Xen writes it) that fits the zero page with the ISA range, and every table it names
// below `limit` (what the entry can reach).
StubStatus check_pvh_start_info(const pvh::StartInfo& info, uint64_t limit);

// Fills `params` (zeroed first) from a checked hvm_start_info, its memory map and its first module
// (null when there is none).
void boot_params_from_start_info(const pvh::StartInfo& info, const pvh::MemmapEntry* map, const pvh::Module* initrd,
                                 boot::BootParams* params);

}  // namespace kpack
