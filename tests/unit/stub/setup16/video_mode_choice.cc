// The 16-bit setup's video mode choice (stub/setup16/video_mode_choice.h) on recorded VESA BIOS
// answers: a mode list like SeaBIOS's VGA BIOS under QEMU (-vga std), with its 4F01h replies.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "stub/setup16/video_mode_choice.h"

using namespace kpack;
using namespace kpack::setup16;

namespace {

constexpr uint16_t kLfbAttributes = kVbeModeSupported | kVbeModeColour | kVbeModeGraphics | kVbeModeLinear | 0x2;

VbeModeInfo graphics(uint16_t width, uint16_t height, uint8_t bpp, uint8_t model = 6, uint8_t planes = 1) {
  VbeModeInfo info{};
  info.attributes = kLfbAttributes;
  info.width = width;
  info.height = height;
  info.bits_per_pixel = bpp;
  info.memory_model = model;
  info.planes = planes;
  return info;
}

VbeModeInfo text(uint16_t columns, uint16_t rows) {
  VbeModeInfo info{};
  info.attributes = kVbeModeSupported | kVbeModeTty | 0x2;
  info.width = columns;
  info.height = rows;
  return info;
}

struct RecordedVbe {
  std::vector<uint16_t> list;               // what the far pointer in 4F00h's block points at
  std::map<uint16_t, VbeModeInfo> replies;  // 4F01h; a missing number is refused
  mutable std::vector<uint16_t> queried;
  uint16_t entry(uint16_t i) const { return i < list.size() ? list[i] : 0xFFFF; }
  const VbeModeInfo* query(uint16_t number) const {
    queried.push_back(number);
    auto it = replies.find(number);
    return it == replies.end() ? nullptr : &it->second;
  }
};

RecordedVbe qemu_std_vga() {
  return {{0x100, 0x101, 0x108, 0x112, 0x115, 0x117, 0x118, 0x1234, 0x11B, 0x140, 0xFFFF, 0x144},
          {{0x100, graphics(640, 400, 8, 4)},
           {0x101, graphics(640, 480, 8, 4)},
           {0x108, text(80, 60)},
           {0x112, graphics(640, 480, 24)},
           {0x115, graphics(800, 600, 24)},
           {0x117, graphics(1024, 768, 16)},
           {0x118, graphics(1024, 768, 24, 3)},  // planar model: not drawable by vesafb
           {0x11B, graphics(1280, 1024, 24, 6, 4)},
           {0x140, graphics(1920, 1080, 32)},
           {0x144, graphics(2560, 1600, 32)}},  // past the terminator
          {}};
}

ModeChoice choose(uint16_t vid_mode, Adapter adapter, const RecordedVbe& vbe, bool present = true) {
  return choose_video_mode(
      vid_mode, adapter, present, [&](uint16_t i) { return vbe.entry(i); },
      [&](uint16_t number) { return vbe.query(number); });
}

void check(const ModeChoice& choice, ModeSetter setter, uint16_t id, uint16_t width, uint16_t height,
           bool recalculate = false) {
  CHECK(choice.setter == setter);
  CHECK(choice.mode.id == id);
  CHECK(choice.mode.width == width);
  CHECK(choice.mode.height == height);
  CHECK(choice.recalculate == recalculate);
}

}  // namespace

TEST_CASE("the aliases: normal is 80x25, extended the 8-point font, 0x0F04 keeps the mode") {
  RecordedVbe vbe = qemu_std_vga();
  check(choose(boot::kVidModeNormal, kVga, vbe), ModeSetter::kVga, kMode80x25, 80, 25);
  check(choose(boot::kVidModeExtended, kVga, vbe), ModeSetter::kVga, kMode8Point, 80, 50);
  check(choose(boot::kVidModeExtended, kEga, vbe), ModeSetter::kVga, kMode8Point, 80, 43);
  CHECK(choose(kModeCurrent, kVga, vbe).setter == ModeSetter::kKeep);
  CHECK(vbe.queried.empty());  // the VGA table answered: the BIOS was not asked
}

TEST_CASE("by menu position: VGA's modes, then the listed VESA modes with a size") {
  RecordedVbe vbe = qemu_std_vga();
  check(choose(0, kVga, vbe), ModeSetter::kVga, kMode80x25, 80, 25);
  check(choose(6, kVga, vbe), ModeSetter::kVga, kMode80x60, 80, 60);
  // 7: the first listed VESA mode (0x100, packed pixel 640x400); 0x118 and 0x11B are not listed.
  check(choose(7, kVga, vbe), ModeSetter::kVesa, 0x300, 640, 400);
  check(choose(11, kVga, vbe), ModeSetter::kVesa, 0x315, 800, 600);
  check(choose(13, kVga, vbe), ModeSetter::kVesa, 0x340, 1920, 1080);
  check(choose(1, kCga, vbe), ModeSetter::kVesa, 0x300, 640, 400);  // CGA's table has one mode
}

TEST_CASE("by number and by size, with the recalculate bit carried") {
  RecordedVbe vbe = qemu_std_vga();
  check(choose(0x317, kVga, vbe), ModeSetter::kVesa, 0x317, 1024, 768);                   // vga=791
  CHECK(vbe.queried == std::vector<uint16_t>{0x100, 0x101, 0x108, 0x112, 0x115, 0x117});  // no further
  check(choose(0x8F05, kVga, vbe), ModeSetter::kVga, kMode80x30, 80, 30, true);
  check(choose(0x3C50, kVga, vbe), ModeSetter::kVga, kMode80x60, 80, 60);  // 60 lines << 8 + 80 columns
  check(choose(0x3C50, kEga, vbe), ModeSetter::kVesa, 0x308, 80, 60);      // EGA: the VBE text mode
  check(choose(0x8000 | 0x308, kEga, vbe), ModeSetter::kVesa, 0x308, 80, 60, true);
}

TEST_CASE("numbers no list names: BIOS modes, unlisted VESA modes, else undefined") {
  RecordedVbe vbe = qemu_std_vga();
  check(choose(0x113, kVga, vbe), ModeSetter::kBios, 0x113, 0, 0);
  check(choose(0x318, kVga, vbe), ModeSetter::kVesa, 0x318, 0, 0);    // listed, but planar: set unlisted
  check(choose(0x344, kVga, vbe), ModeSetter::kVesa, 0x344, 0, 0);    // past the list's terminator
  CHECK(choose(0x400, kVga, vbe).setter == ModeSetter::kUndefined);   // not 1024x768's (768 << 8) + 1024
  CHECK(choose(0x8F04, kVga, vbe).setter == ModeSetter::kUndefined);  // "current" with recalculate
  CHECK(choose(20, kVga, vbe).setter == ModeSetter::kUndefined);      // past the menu
  // Without VBE only the VGA table counts.
  RecordedVbe none = qemu_std_vga();
  CHECK(choose(7, kVga, none, false).setter == ModeSetter::kUndefined);
  CHECK(none.queried.empty());
}

TEST_CASE("a mode list without its terminator is read no further than 1024 entries") {
  RecordedVbe endless{std::vector<uint16_t>(2000, 0x1FF), {}, {}};
  CHECK(choose(0x3C50, kCga, endless).setter == ModeSetter::kUndefined);
  CHECK(endless.queried.size() == kMaxVesaListLength);
}
