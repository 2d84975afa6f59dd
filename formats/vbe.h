// The VESA BIOS Extension's replies (VBE 3.0, functions 4F00h and 4F01h), as the 16-bit setup reads them
// and the host tests record them.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack {

inline constexpr uint32_t kVbeSignature = 0x41534556;  // "VESA"
inline constexpr uint16_t kVbeOk = 0x004F;

struct VbeInfo {  // 4F00h
  ul32 signature;
  ul16 version;
  ul32 oem_string;
  ul32 capabilities;      // bit 0: the DAC can switch to 8 bits per primary
  ul16 mode_list_offset;  // a far pointer to 16-bit mode numbers, 0xFFFF-terminated
  ul16 mode_list_segment;
  ul16 total_memory;  // 64 KiB units
  uint8_t reserved[492];
};
static_assert(sizeof(VbeInfo) == 512);
static_assert(offsetof(VbeInfo, mode_list_offset) == 0x0E);
static_assert(offsetof(VbeInfo, total_memory) == 0x12);

struct VbeModeInfo {  // 4F01h
  ul16 attributes;
  uint8_t window_attributes[2];
  ul16 window_granularity;
  ul16 window_size;
  ul16 window_segments[2];
  ul32 window_function;
  ul16 bytes_per_line;
  ul16 width;
  ul16 height;
  uint8_t char_width;
  uint8_t char_height;
  uint8_t planes;
  uint8_t bits_per_pixel;
  uint8_t banks;
  uint8_t memory_model;  // 4: packed pixel, 6: direct colour
  uint8_t bank_size;
  uint8_t image_pages;
  uint8_t reserved0;
  uint8_t colour_fields[8];  // red, green, blue, reserved: size then position of each
  uint8_t direct_colour_info;
  ul32 framebuffer;
  ul32 offscreen_memory;
  ul16 offscreen_size;
  uint8_t reserved1[206];
};
static_assert(sizeof(VbeModeInfo) == 256);
static_assert(offsetof(VbeModeInfo, bytes_per_line) == 0x10);
static_assert(offsetof(VbeModeInfo, bits_per_pixel) == 0x19);
static_assert(offsetof(VbeModeInfo, memory_model) == 0x1B);
static_assert(offsetof(VbeModeInfo, colour_fields) == 0x1F);
static_assert(offsetof(VbeModeInfo, framebuffer) == 0x28);

// Mode attributes (4F01h).
inline constexpr uint16_t kVbeModeSupported = 1 << 0;
inline constexpr uint16_t kVbeModeTty = 1 << 2;
inline constexpr uint16_t kVbeModeColour = 1 << 3;
inline constexpr uint16_t kVbeModeGraphics = 1 << 4;
inline constexpr uint16_t kVbeModeLinear = 1 << 7;
// 4F02h: ask for the linear framebuffer rather than banked windows.
inline constexpr uint16_t kVbeUseLinear = 1 << 14;

}  // namespace kpack
