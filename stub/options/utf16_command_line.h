// The kernel's command line from an EFI image's LoadOptions (UTF-16), byte for byte as the Linux
// EFI stub makes it (6.1, efi_convert_cmdline): the text up to the first NUL or newline, each
// character as UTF-8 (a surrogate pair as one 4-byte character, an unpaired surrogate as U+FFFD,
// a high surrogate that ends the text dropped). When the result would not fit the kernel's
// COMMAND_LINE_SIZE, it is cut at the last whitespace outside double quotes that fits.
#pragma once

#include <stdint.h>

namespace kpack {

// `units`: LoadOptions' size in UTF-16 units. `limit`: the kernel's COMMAND_LINE_SIZE, the room
// `out` has, NUL included. Returns the length written before the NUL.
uint32_t utf16_command_line_to_utf8(const char16_t* text, uint64_t units, char* out, uint32_t limit);

}  // namespace kpack
