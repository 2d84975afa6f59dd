// The 16-bit setup: what a BIOS-booted kernel expects done before its 32-bit entry, in the order
// the kernel's own setup (arch/x86/boot/main.c) does it, reading the BIOS through INT services.
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

// The setup header the loader filled in, at 0x1F1 in our segment (entry16.S).
extern "C" const kpack::boot::SetupHeader setup_header;

namespace kpack::setup16 {

// constinit: nothing runs static constructors here (setup16.ld refuses them).
alignas(16) constinit boot::BootParams boot_params{};

namespace {

// Protocol 2.01 and older: the loader says where the command line is with a magic word at 0x90020.
void adopt_old_command_line() {
  constexpr uint16_t kOldCommandLineMagic = 0xA33F;
  set_fs(0x9000);
  if (boot_params.hdr.cmd_line_ptr || read_fs16(0x20) != kOldCommandLineMagic) return;
  uint16_t offset = read_fs16(0x22);
  uint32_t segment = offset < boot_params.hdr.setup_move_size ? data_segment() : 0x9000;
  boot_params.hdr.cmd_line_ptr = (segment << 4) + offset;
}

// The BIOS learns that the OS will run in long mode, which some firmware tunes itself for.
void tell_bios_long_mode() {
  BiosRegs regs = bios_regs();
  regs.eax = 0xEC00;
  regs.ebx = 2;
  bios_call(0x15, &regs, nullptr);
}

// SpeedStep (IST) information; older BIOSes are said to crash on the call, so only from family 6.
void query_ist(uint32_t cpu_family) {
  if (cpu_family < 6) return;
  BiosRegs regs = bios_regs();
  regs.eax = 0xE980;
  regs.edx = 0x47534943;  // "GSIC"
  BiosRegs out = bios_call(0x15, regs);
  boot_params.ist_info.signature = out.eax;
  boot_params.ist_info.command = out.ebx;
  boot_params.ist_info.event = out.ecx;
  boot_params.ist_info.perf_level = out.edx;
}

// kbd_status as the kernel's setup leaves it, and the typematic rate it sets.
void init_keyboard() {
  BiosRegs regs = bios_regs();
  regs.eax = 0x0200;
  boot_params.kbd_status = bios_call(0x16, regs).al();
  regs.eax = 0x0305;
  regs.ebx = 0;
  bios_call(0x16, &regs, nullptr);
}

}  // namespace

extern "C" [[noreturn]] void setup_main() {
  // The zero page starts as the header the loader filled in (command line, initrd, vid_mode...).
  memcpy(&boot_params.hdr, &setup_header, sizeof(setup_header));
  adopt_old_command_line();
  // A clear message instead of a fault in the kernel's first 64-bit instruction.
  uint32_t cpu_family = check_cpu();
  tell_bios_long_mode();
  detect_memory();
  init_keyboard();
  query_ist(cpu_family);
  query_edd();
  set_video();
  // What the kernel's setup passes on to its decompressor (which our stub replaces).
  if (command_line_flag("quiet")) boot_params.hdr.loadflags = boot_params.hdr.loadflags | boot::kQuietFlag;
  go_to_protected_mode();
}

}  // namespace kpack::setup16
