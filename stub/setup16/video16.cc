// Video: the display the kernel starts with, left as the kernel's own setup leaves it
// (arch/x86/boot/video*.c): the firmware's text mode, or the mode hdr.vid_mode names (loaders
// turn vga= into it), and screen_info describing it, so vgacon, vesafb/simpledrm and
// earlyprintk=vga find their screen. vga=ask shows no menu: it keeps the current mode.
#include "formats/vbe.h"
#include "stub/arch/cpu.h"
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"
#include "stub/setup16/video_mode_choice.h"

namespace kpack::setup16 {
namespace {

struct State {
  Adapter adapter = kCga;                      // until probed, as in the kernel: the first look trusts no BIOS rows
  uint16_t forced_cols = 0, forced_lines = 0;  // what a mode set promised, over the BIOS's word
  bool screen_lost = false;                    // a mode set cleared the screen: put the saved text back
  bool graphics = false;                       // a VESA linear-framebuffer mode is set
  uint16_t text_segment = 0xB800;
};
constinit State state{};

constinit VbeInfo vbe_info{};
constinit bool vbe_present = false;
constinit VbeModeInfo vbe_mode{};

BiosRegs int10(uint16_t ax, uint16_t bx = 0, uint16_t cx = 0) {
  BiosRegs regs = bios_regs();
  regs.eax = ax;
  regs.ebx = bx;
  regs.ecx = cx;
  return bios_call(0x10, regs);
}

// screen_info for a text mode: cursor, mode, and the geometry from the BIOS data area.
void store_text_mode() {
  if (state.graphics) return;  // the VESA path stored the framebuffer instead
  boot::ScreenInfo& s = boot_params.screen_info;
  BiosRegs cursor = int10(0x0300);
  s.orig_x = cursor.dl();
  s.orig_y = cursor.dh();
  BiosRegs mode = int10(0x0F00);
  s.orig_video_mode = mode.al() & 0x7F;  // some BIOSes leave the top bit set
  s.orig_video_page = mode.bh();
  state.text_segment = s.orig_video_mode == 7 ? 0xB000 : 0xB800;
  set_fs(0);
  s.orig_video_points = read_fs16(0x485);
  uint16_t cols = read_fs16(0x44A);
  uint16_t lines = state.adapter == kCga ? 25 : read_fs8(0x484) + 1;
  if (state.forced_cols) cols = state.forced_cols;
  if (state.forced_lines) lines = state.forced_lines;
  s.orig_video_cols = static_cast<uint8_t>(cols);
  s.orig_video_lines = static_cast<uint8_t>(lines);
}

// The firmware's messages survive a mode set, as with the stock setup.
struct {
  uint16_t cols, lines;
  uint8_t x, y;
  bool valid;
} saved;
uint16_t saved_text[80 * 25];

void save_screen() {
  const boot::ScreenInfo& s = boot_params.screen_info;
  saved = {s.orig_video_cols, s.orig_video_lines, s.orig_x, s.orig_y, false};
  uint32_t cells = static_cast<uint32_t>(saved.cols) * saved.lines;
  if (cells > sizeof(saved_text) / sizeof(saved_text[0])) return;
  set_fs(state.text_segment);
  for (uint32_t i = 0; i < cells; ++i) saved_text[i] = read_fs16(static_cast<uint16_t>(2 * i));
  saved.valid = true;
}

void restore_screen() {
  if (state.graphics || !saved.valid) return;
  const boot::ScreenInfo& s = boot_params.screen_info;
  set_fs(state.text_segment);
  uint16_t at = 0;
  for (uint16_t y = 0; y < s.orig_video_lines; ++y) {
    for (uint16_t x = 0; x < s.orig_video_cols; ++x, at += 2) {
      bool kept = y < saved.lines && x < saved.cols;
      write_fs16(at, kept ? saved_text[y * saved.cols + x] : 0x0720);  // blank, light grey
    }
  }
  BiosRegs regs = bios_regs();
  regs.eax = 0x0200;  // cursor back where it was, page 0
  regs.edx = static_cast<uint16_t>(saved.y << 8 | saved.x);
  bios_call(0x10, &regs, nullptr);
}

// EGA/VGA tell themselves apart through INT 10h; MDA/CGA leave BL as it was.
void probe_adapter() {
  BiosRegs ega = int10(0x1200, 0x10);
  boot_params.screen_info.orig_video_ega_bx = ega.bx();
  if (ega.bl() == 0x10) {
    state.adapter = kCga;
    return;
  }
  state.adapter = int10(0x1A00).al() == 0x1A ? kVga : kEga;
  if (state.adapter == kVga) boot_params.screen_info.orig_video_isVGA = boot::kVideoTypeVgaColor;
}

// --- VGA text modes
uint16_t crtc_port() { return (inb(0x3CC) & 1) ? 0x3D4 : 0x3B4; }
uint8_t read_indexed(uint16_t port, uint8_t index) {
  outb(port, index);
  return inb(port + 1);
}
void write_indexed(uint16_t port, uint8_t index, uint8_t value) {
  outw(port, static_cast<uint16_t>(index | value << 8));
}

void set_basic_text_mode() {
  uint16_t current = int10(0x0F00).ax();  // AH: columns, AL: mode
  set_fs(0);
  uint8_t last_row = read_fs8(0x484);
  // Already 80x25 colour or mono text: setting it again would only clear the screen.
  if ((current == 0x5003 || current == 0x5007) && (last_row == 0 || last_row == 24)) return;
  uint8_t mode = static_cast<uint8_t>(current);
  int10(mode == 7 ? 7 : 3);
  state.screen_lost = true;
}

void set_8x8_font() {
  int10(0x1112, 0);          // 8x8 font: 50 lines on VGA, 43 on EGA
  int10(0x1200, 0x20);       // alternate print screen
  int10(0x1201, 0x34);       // no cursor emulation
  int10(0x0100, 0, 0x0607);  // cursor on scan lines 6-7
}

void set_9x14_font() {
  int10(0x1111, 0);
  int10(0x1201, 0x34);
  int10(0x0100, 0, 0x0B0C);
}

// 480 scan lines (the 30-, 34- and 60-line modes) by reprogramming the CRTC's vertical timing.
void set_480_scanlines(uint16_t lines) {
  uint16_t crtc = crtc_port();
  uint16_t end = lines - 1;
  uint8_t overflow = static_cast<uint8_t>(0x3C | ((end >> 7) & 0x02) | ((end >> 3) & 0x40));
  write_indexed(crtc, 0x11, 0x0C);  // vertical sync end; unlocks CR0-7
  write_indexed(crtc, 0x06, 0x0B);  // vertical total
  write_indexed(crtc, 0x07, overflow);
  write_indexed(crtc, 0x10, 0xEA);                                // vertical sync start
  write_indexed(crtc, 0x12, static_cast<uint8_t>(end));           // vertical display end
  write_indexed(crtc, 0x15, 0xE7);                                // vertical blank start
  write_indexed(crtc, 0x16, 0x04);                                // vertical blank end
  outb(0x3C2, static_cast<uint8_t>((inb(0x3CC) & 0x0D) | 0xE2));  // 25 MHz clock, 480-line polarity
}

bool set_vga_mode(const Mode& mode) {
  set_basic_text_mode();
  state.forced_cols = mode.width;  // a BIOS may report the old geometry
  state.forced_lines = mode.height;
  switch (mode.id) {
    case kMode8Point: set_8x8_font(); break;
    case kMode80x43:
      int10(0x1201, 0x30);  // 350 scan lines
      int10(0x0003);
      set_8x8_font();
      break;
    case kMode80x28: set_9x14_font(); break;
    case kMode80x30: set_480_scanlines(30 * 16); break;
    case kMode80x34:
      set_9x14_font();
      set_480_scanlines(34 * 14);
      break;
    case kMode80x60:
      set_8x8_font();
      set_480_scanlines(60 * 8);
      break;
  }
  return true;
}

// vid_mode's recalculate bit: the display end follows the line count times the font height.
void recalculate_vertical() {
  set_fs(0);
  uint16_t lines = state.forced_lines ? state.forced_lines : read_fs8(0x484) + 1;
  uint16_t end = static_cast<uint16_t>(lines * read_fs8(0x485) - 1);
  uint16_t crtc = crtc_port();
  write_indexed(crtc, 0x11, read_indexed(crtc, 0x11) & 0x7F);  // unlock CR0-7
  write_indexed(crtc, 0x12, static_cast<uint8_t>(end));
  uint8_t overflow = read_indexed(crtc, 0x07) & 0xBD;
  write_indexed(crtc, 0x07, static_cast<uint8_t>(overflow | ((end >> 7) & 0x02) | ((end >> 3) & 0x40)));
}

// --- BIOS modes (vid_mode 0x100 + n)
bool set_bios_mode(uint8_t mode) {
  int10(mode);
  uint8_t now = int10(0x0F00).al() & 0x7F;
  state.screen_lost = true;
  if (now == mode) return true;
  // Neither the new mode nor the old one: go back to where we started.
  if (now != boot_params.screen_info.orig_video_mode) int10(boot_params.screen_info.orig_video_mode);
  return false;
}

// --- VESA modes (vid_mode 0x200 + n)
void probe_vbe() {
  BiosRegs regs = bios_regs();
  regs.eax = 0x4F00;
  regs.edi = offset_of(&vbe_info);
  vbe_present =
      bios_call(0x10, regs).ax() == kVbeOk && vbe_info.signature == kVbeSignature && vbe_info.version >= 0x0102;
}

bool query_vbe_mode(uint16_t number) {
  memset(&vbe_mode, 0, sizeof(vbe_mode));
  BiosRegs regs = bios_regs();
  regs.eax = 0x4F01;
  regs.ecx = number;
  regs.edi = offset_of(&vbe_mode);
  return bios_call(0x10, regs).ax() == kVbeOk;
}

void set_dac_8_bits() {
  uint8_t bits = 6;
  if (vbe_info.capabilities & 1) {
    BiosRegs out = int10(0x4F08, 0x0800);
    if (out.ax() == kVbeOk) bits = out.bh();
  }
  boot::ScreenInfo& s = boot_params.screen_info;
  s.red_size = s.green_size = s.blue_size = s.rsvd_size = bits;
  s.red_pos = s.green_pos = s.blue_pos = s.rsvd_pos = 0;
}

void store_framebuffer() {
  boot::ScreenInfo& s = boot_params.screen_info;
  s.orig_video_isVGA = boot::kVideoTypeVesaLfb;
  s.vesa_attributes = vbe_mode.attributes;
  s.lfb_linelength = vbe_mode.bytes_per_line;
  s.lfb_width = vbe_mode.width;
  s.lfb_height = vbe_mode.height;
  s.lfb_depth = vbe_mode.bits_per_pixel;
  s.pages = vbe_mode.image_pages;
  s.lfb_base = vbe_mode.framebuffer;
  memcpy(&s.red_size, vbe_mode.colour_fields, sizeof(vbe_mode.colour_fields));
  s.lfb_size = vbe_info.total_memory;
  if (vbe_mode.bits_per_pixel <= 8) set_dac_8_bits();
  // The protected-mode interface, for the drivers that pan or set palettes through it.
  BiosRegs out = int10(0x4F0A);
  if (out.ax() == kVbeOk) {
    s.vesapm_seg = out.es;
    s.vesapm_off = out.di();
  }
}

bool set_vesa_mode(const Mode& mode) {
  uint16_t number = mode.id - kFirstVesaMode;
  if (!query_vbe_mode(number)) return false;
  bool graphics = vbe_framebuffer_mode(vbe_mode);
  if (!graphics && !vbe_text_mode(vbe_mode)) return false;
  if (graphics) number |= kVbeUseLinear;
  if (int10(0x4F02, number).ax() != kVbeOk) return false;
  state.graphics = graphics;
  if (graphics) {
    store_framebuffer();
  } else {
    state.forced_cols = mode.width;
    state.forced_lines = mode.height;
    state.screen_lost = true;
  }
  return true;
}

uint16_t vesa_list_entry(uint16_t index) {
  set_fs(vbe_info.mode_list_segment);
  return read_fs16(static_cast<uint16_t>(vbe_info.mode_list_offset + 2 * index));
}

const VbeModeInfo* vesa_mode_info(uint16_t number) { return query_vbe_mode(number) ? &vbe_mode : nullptr; }

bool set_mode(uint16_t number) {
  ModeChoice choice = choose_video_mode(number, state.adapter, vbe_present, vesa_list_entry, vesa_mode_info);
  bool done = false;
  switch (choice.setter) {
    case ModeSetter::kKeep: return true;
    case ModeSetter::kVga: done = set_vga_mode(choice.mode); break;
    case ModeSetter::kVesa: done = set_vesa_mode(choice.mode); break;
    case ModeSetter::kBios: done = set_bios_mode(static_cast<uint8_t>(choice.mode.id - kFirstBiosMode)); break;
    case ModeSetter::kUndefined: break;
  }
  if (done && choice.recalculate) recalculate_vertical();
  return done;
}

// The monitor's EDID block, read through VBE/DDC; 0x13 bytes where there is none, as the kernel's
// setup leaves it.
void store_edid() {
  memset(boot_params.edid_info, 0x13, sizeof(boot_params.edid_info));
  if (vbe_info.version < 0x0200) return;
  BiosRegs regs = bios_regs();
  regs.eax = 0x4F15;  // DDC capabilities; ES:DI must be 0:0
  regs.es = 0;
  if (bios_call(0x10, regs).ax() != kVbeOk) return;
  regs = bios_regs();
  regs.eax = 0x4F15;
  regs.ebx = 1;  // read EDID block 0 into ES:DI
  regs.edi = offset_of(boot_params.edid_info);
  bios_call(0x10, &regs, nullptr);
}

}  // namespace

void set_video() {
  uint16_t mode = boot_params.hdr.vid_mode;
  store_text_mode();
  save_screen();
  probe_adapter();
  probe_vbe();
  if (mode == boot::kVidModeAsk) mode = kModeCurrent;
  if (!set_mode(mode)) {
    screen_write("kpack: undefined video mode number ");
    screen_write_hex(mode);
    screen_write(", keeping the current mode\n");
    mode = kModeCurrent;
  }
  boot_params.hdr.vid_mode = mode;
  store_edid();
  store_text_mode();
  if (state.screen_lost) restore_screen();
}

}  // namespace kpack::setup16
