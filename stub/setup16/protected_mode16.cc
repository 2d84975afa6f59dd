// The last steps in real mode, as the kernel's setup takes them (arch/x86/boot/pm.c, a20.c): the
// loader's hook or interrupts off, the A20 gate open, the FPU and the PICs quiet, then the 32-bit
// entry with the flat segments the boot protocol promises.
#include "stub/arch/cpu.h"
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

// entry16.S: loads the GDT, sets CR0.PE and jumps to `entry` with ESI = `boot_params`.
extern "C" [[noreturn]] void enter_protected_mode(uint32_t entry, uint32_t boot_params);

namespace kpack::setup16 {
namespace {

// A loader may ask to be called instead of our own "interrupts off" (boot.rst, realmode_swtch).
void switch_hook() {
  if (boot_params.hdr.realmode_swtch) {
    uint32_t hook = boot_params.hdr.realmode_swtch;
    asm volatile("lcallw *%0" : : "m"(hook) : "eax", "ebx", "ecx", "edx", "esi", "edi", "memory");
    return;
  }
  asm volatile("cli");
  outb(0x70, 0x80);  // NMI off
  io_delay();
}

// Writes through 0000:0200 and reads through FFFF:0210, the same address when A20 is off.
bool a20_enabled(int tries) {
  set_fs(0);
  uint32_t saved = read_fs32(0x200), probe = saved;
  bool enabled = false;
  while (tries-- > 0 && !enabled) {
    write_fs32(0x200, ++probe);
    io_delay();
    enabled = read_gs32(0xFFFF, 0x210) != probe;
  }
  write_fs32(0x200, saved);
  return enabled;
}

// The 8042 keyboard controller: drained of pending bytes, or false if it never answers.
bool drain_8042() {
  for (int tries = 0; tries < 100000; ++tries) {
    uint8_t status = inb(0x64);
    if (status == 0xFF) return false;  // no controller
    io_delay();
    if (status & 1) {
      inb(0x60);
      io_delay();
    } else if (!(status & 2)) {
      return true;
    }
  }
  return false;
}

bool enable_a20() {
  for (int round = 0; round < 255; ++round) {
    if (a20_enabled(32)) return true;
    BiosRegs regs = bios_regs();
    regs.eax = 0x2401;  // the BIOS's own way
    bios_call(0x15, &regs, nullptr);
    if (a20_enabled(32)) return true;
    if (drain_8042()) {  // the keyboard controller's output port
      outb(0x64, 0xD1);
      drain_8042();
      outb(0x60, 0xDF);
      drain_8042();
      outb(0x64, 0xFF);  // a null command some controllers need
      drain_8042();
      if (a20_enabled(1 << 21)) return true;
    }
    outb(0x92, static_cast<uint8_t>((inb(0x92) | 0x02) & ~0x01));  // the fast gate, never the reset bit
    if (a20_enabled(1 << 21)) return true;
  }
  return false;
}

}  // namespace

void go_to_protected_mode() {
  switch_hook();
  if (!enable_a20()) halt_setup("the A20 gate does not open");
  outb(0xF0, 0);  // clear a pending FPU error
  io_delay();
  outb(0xF1, 0);  // reset the FPU
  io_delay();
  outb(0xA1, 0xFF);  // mask the secondary PIC
  io_delay();
  outb(0x21, 0xFB);  // and the primary, but for the cascade
  io_delay();
  // No IDT until the kernel sets one: an NMI or fault now is a clean triple fault, not a jump to junk.
  static const uint16_t null_idt[3] = {0, 0, 0};
  asm volatile("lidtl %0" : : "m"(null_idt));
  enter_protected_mode(boot_params.hdr.code32_start, linear_address(&boot_params));
}

}  // namespace kpack::setup16
