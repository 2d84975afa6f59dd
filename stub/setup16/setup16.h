// The 16-bit setup's steps (main16.cc runs them in order) and what they share. Real mode only.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "formats/boot_params.h"

namespace kpack::setup16 {

// The zero page the kernel starts with; the 32-bit entry gets its linear address in ESI.
extern boot::BootParams boot_params;

// cpu16.cc: stops with a message naming what is missing when the CPU cannot run a 64-bit kernel;
// otherwise returns its family (CPUID's base family field, the kernel's cpu.level).
uint32_t check_cpu();
// memory16.cc: INT 15h E820, E801 and AH=88h, as the kernel's own setup asks them.
void detect_memory();
// edd16.cc: BIOS disk parameters and MBR signatures for /sys/firmware/edd (edd=off, edd=skipmbr).
void query_edd();
// video16.cc: hdr.vid_mode set, screen_info and edid_info filled.
void set_video();
// protected_mode16.cc: A20, interrupts off, and on to hdr.code32_start; never returns.
[[noreturn]] void go_to_protected_mode();

// console16.cc: text on the BIOS screen, and errors on the screen and COM1 both.
void screen_write(const char* text);
void screen_write_hex(uint16_t value);
// The error line on the screen and COM1, then the CPU halted: setup stops here.
[[noreturn]] void halt_setup(const char* message);

// cmdline16.cc: the kernel command line, read where the loader left it (below 1 MiB).
// The value of "name=value" into `value` (NUL-terminated, cut to `size`); false if absent.
bool command_line_value(const char* name, char* value, size_t size);
// Whether the bare word `name` is on the command line.
bool command_line_flag(const char* name);

// libc16.cc
extern "C" void* memcpy(void* dst, const void* src, size_t size);
extern "C" void* memset(void* dst, int value, size_t size);
bool equal(const char* a, const char* b);

}  // namespace kpack::setup16
