// Which display mode hdr.vid_mode names (loaders turn vga= into it), decided as the kernel's own
// setup decides it (arch/x86/boot/video-mode.c): a menu position, a mode number, or a size, looked
// up in the adapter's VGA text modes, then in the VESA BIOS's mode list. No BIOS call in here: the
// list and each mode's 4F01h reply come through callbacks, so the host tests the choice on recorded
// VBE answers (tests/unit/stub/setup16/video_mode_choice.cc) and video16.cc does the setting.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "formats/vbe.h"

namespace kpack::setup16 {

// vid_mode numbers beyond the three aliases (the kernel's arch/x86/boot/video.h).
inline constexpr uint16_t kFirstBiosMode = 0x0100, kBiosModeCount = 0x80;   // BIOS mode n is 0x100 + n
inline constexpr uint16_t kFirstVesaMode = 0x0200, kVesaModeCount = 0x200;  // VESA mode n is 0x200 + n
inline constexpr uint16_t kMode80x25 = 0x0F00, kMode8Point = 0x0F01, kMode80x43 = 0x0F02, kMode80x28 = 0x0F03,
                          kModeCurrent = 0x0F04, kMode80x30 = 0x0F05, kMode80x34 = 0x0F06, kMode80x60 = 0x0F07;
inline constexpr uint16_t kRecalculate = 0x8000;  // reprogram the vertical timing for the new line count
// A VESA BIOS list may lack its 0xFFFF terminator: no more entries than this are read.
inline constexpr uint16_t kMaxVesaListLength = 1024;

enum Adapter : uint8_t { kCga, kEga, kVga };

struct Mode {
  uint16_t id;             // its vid_mode number
  uint16_t width, height;  // characters for text modes, pixels for graphics
};

inline constexpr Mode kVgaModes[] = {{kMode80x25, 80, 25}, {kMode8Point, 80, 50}, {kMode80x43, 80, 43},
                                     {kMode80x28, 80, 28}, {kMode80x30, 80, 30},  {kMode80x34, 80, 34},
                                     {kMode80x60, 80, 60}};
inline constexpr Mode kEgaModes[] = {{kMode80x25, 80, 25}, {kMode8Point, 80, 43}};
inline constexpr Mode kCgaModes[] = {{kMode80x25, 80, 25}};

inline bool vbe_text_mode(const VbeModeInfo& mode) {
  return (mode.attributes & (kVbeModeSupported | kVbeModeTty | kVbeModeGraphics)) == (kVbeModeSupported | kVbeModeTty);
}
inline bool vbe_framebuffer_mode(const VbeModeInfo& mode) {
  constexpr uint16_t kWanted = kVbeModeSupported | kVbeModeColour | kVbeModeGraphics | kVbeModeLinear;
  return (mode.attributes & kWanted) == kWanted;
}
// Text modes, and linear framebuffers a kernel driver (vesafb, simpledrm) can draw on.
inline bool vbe_mode_listed(const VbeModeInfo& mode) {
  return vbe_text_mode(mode) ||
         (vbe_framebuffer_mode(mode) && mode.planes == 1 && (mode.memory_model == 4 || mode.memory_model == 6));
}

enum class ModeSetter : uint8_t {
  kKeep,       // the current mode stays
  kVga,        // one of the adapter's text modes
  kVesa,       // a VESA BIOS mode, listed or not
  kBios,       // a BIOS mode number no list names
  kUndefined,  // nothing by that number
};

struct ModeChoice {
  ModeSetter setter;
  Mode mode;         // the size is 0x0 for a number no list names
  bool recalculate;  // vid_mode asked for the vertical timing to follow the line count
};

// `list_entry(i)`: the VESA BIOS's i-th mode number; `query(number)`: its 4F01h reply, null when the
// BIOS refuses. Neither is called without `vbe_present`, and the list no further than the match.
template <typename ListEntry, typename Query>
ModeChoice choose_video_mode(uint16_t vid_mode, Adapter adapter, bool vbe_present, const ListEntry& list_entry,
                             const Query& query) {
  if (vid_mode == kModeCurrent) return {ModeSetter::kKeep, {}, false};
  if (vid_mode == boot::kVidModeNormal) vid_mode = kMode80x25;
  if (vid_mode == boot::kVidModeExtended) vid_mode = kMode8Point;
  uint16_t wanted = vid_mode & ~kRecalculate;
  ModeChoice choice{ModeSetter::kVga, {wanted, 0, 0}, static_cast<bool>(vid_mode & kRecalculate)};
  const Mode* table = adapter == kVga ? kVgaModes : adapter == kEga ? kEgaModes : kCgaModes;
  uint16_t count = adapter == kVga   ? sizeof(kVgaModes) / sizeof(Mode)
                   : adapter == kEga ? sizeof(kEgaModes) / sizeof(Mode)
                                     : sizeof(kCgaModes) / sizeof(Mode);
  // The menu: the adapter's modes, then the VESA BIOS's list (text modes and framebuffers only).
  uint16_t position = 0;
  for (uint16_t i = 0; i < count + (vbe_present ? kMaxVesaListLength : 0); ++i) {
    Mode mode;
    if (i < count) {
      mode = table[i];
    } else {
      uint16_t number = list_entry(static_cast<uint16_t>(i - count));
      if (number == 0xFFFF) break;
      if (number & ~0x1FF) continue;
      const VbeModeInfo* info = query(number);
      if (!info || !vbe_mode_listed(*info)) continue;
      mode = Mode{static_cast<uint16_t>(number + kFirstVesaMode), info->width, info->height};
    }
    // Named by menu position (counting modes with a size), by number, or by (lines << 8) + columns,
    // not cut to 16 bits (1024x768 is not 0x400).
    bool visible = mode.width || mode.height;
    if ((wanted == position && visible) || wanted == mode.id || wanted == (uint32_t{mode.height} << 8) + mode.width) {
      choice.mode = mode;
      if (i >= count) choice.setter = ModeSetter::kVesa;
      return choice;
    }
    position += visible;
  }
  // Numbers no list names may still be modes the BIOS knows.
  if (wanted >= kFirstBiosMode && wanted < kFirstBiosMode + kBiosModeCount)
    choice.setter = ModeSetter::kBios;
  else if (wanted >= kFirstVesaMode && wanted < kFirstVesaMode + kVesaModeCount)
    choice.setter = ModeSetter::kVesa;
  else
    choice.setter = ModeSetter::kUndefined;
  return choice;
}

}  // namespace kpack::setup16
