// Memory sizes from the BIOS: the E820 map, and the E801 and AH=88h sizes the kernel falls back
// on when the map has fewer than two entries. All three are asked, as the kernel's setup does; what
// the replies mean is memory_size.h's.
#include "stub/setup16/bios.h"
#include "stub/setup16/memory_size.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

BiosReply reply_of(const BiosRegs& regs) { return {regs.eax, regs.ebx, regs.ecx, regs.edx, regs.carry()}; }

void detect_e820() {
  // One register set throughout: each call gets back what the last one returned, as in the kernel.
  BiosRegs regs = bios_regs();
  boot_params.e820_entries =
      static_cast<uint8_t>(read_e820_map(boot_params.e820_table, [&](uint32_t continuation, boot::E820Entry* entry) {
        regs.eax = 0xE820;
        regs.ebx = continuation;
        regs.edx = kSmap;
        regs.ecx = sizeof(boot::E820Entry);
        regs.edi = offset_of(entry);
        regs.eflags = 1;
        bios_call(0x15, &regs, &regs);
        return reply_of(regs);
      }));
}

void detect_e801() {
  BiosRegs regs = bios_regs();
  regs.eax = 0xE801;
  uint32_t alt_mem_k;
  if (e801_memory_k(reply_of(bios_call(0x15, regs)), &alt_mem_k)) boot_params.alt_mem_k = alt_mem_k;
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
