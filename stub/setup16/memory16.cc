// Memory sizes from the BIOS: the E820 map, and the E801 and AH=88h sizes the kernel falls back
// on when the map has fewer than two entries. All three are asked, as the kernel's setup does.
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

constexpr uint32_t kSmap = 0x534D4150;  // "SMAP"

void detect_e820() {
  BiosRegs regs = bios_regs();
  uint32_t count = 0;
  do {
    boot::E820Entry* entry = &boot_params.e820_table[count];
    regs.eax = 0xE820;
    regs.edx = kSmap;
    regs.ecx = sizeof(boot::E820Entry);
    regs.edi = offset_of(entry);
    bios_call(0x15, &regs, &regs);
    // A BIOS may end the list with CF set and no signature: what came before stands.
    if (regs.carry()) break;
    // A BIOS that stops answering "SMAP" mid-list may have returned anything: keep no entry.
    if (regs.eax != kSmap) {
      count = 0;
      break;
    }
    ++count;
    regs.eflags = 1;
  } while (regs.ebx && count < boot::kE820MaxEntries);
  boot_params.e820_entries = static_cast<uint8_t>(count);
}

void detect_e801() {
  BiosRegs regs = bios_regs();
  regs.eax = 0xE801;
  BiosRegs out = bios_call(0x15, regs);
  if (out.carry()) return;
  // AX and CX (KiB between 1 and 16 MiB) are meant to agree; some BIOSes fill only one.
  uint16_t below_16m_k = out.cx() || out.dx() ? out.cx() : out.ax();
  if (below_16m_k > 15 * 1024) return;  // bogus
  // With no hole below 16 MiB, DX adds the 64 KiB blocks above it (the kernel's formula).
  boot_params.alt_mem_k = below_16m_k == 15 * 1024 ? (static_cast<uint32_t>(out.dx()) << 6) + below_16m_k : below_16m_k;
}

void detect_88() {
  BiosRegs regs = bios_regs();
  regs.eax = 0x8800;
  boot_params.screen_info.ext_mem_k = bios_call(0x15, regs).ax();
}

}  // namespace

void detect_memory() {
  detect_e820();
  detect_e801();
  detect_88();
}

}  // namespace kpack::setup16
