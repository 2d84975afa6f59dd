// Resetting the machine, for a boot that failed with panic=N on the command line: the stub waits
// as the kernel's panic() would, then resets, so an unattended machine reaches its boot loader's
// fallback instead of halting forever.
#pragma once

#include <stdint.h>

namespace kpack {

// Waits `seconds` seconds by the CMOS clock (its seconds register ticking over), which every PC
// and QEMU's pc and q35 machines have; without one (a microvm), returns at once.
void wait_seconds(uint64_t seconds);

// Resets the machine as the kernel's emergency restart falls through its ways: the keyboard
// controller's reset line (port 0x64, command 0xFE), then the PCI reset control register (port
// 0xCF9, a hard reset), then a triple fault, which resets every x86 machine (microvm has neither
// of the others).
[[noreturn]] void reset_machine();

}  // namespace kpack
