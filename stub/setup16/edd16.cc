// EDD: what the BIOS says of each hard disk (INT 13h AH=41h/48h/08h) and the MBR signature of
// each, which the kernel matches against the disks it finds (/sys/firmware/edd). Disks 80h-8Fh,
// as the kernel's setup probes them; "edd=off" skips all of it, "edd=skipmbr" the MBR reads.
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

constexpr uint16_t kEddQueryMagic = 0x55AA, kEddReplyMagic = 0xAA55;

bool get_edd_info(uint8_t drive, boot::EddInfo* info) {
  memset(info, 0, sizeof(*info));
  BiosRegs regs = bios_regs();
  regs.eax = 0x4100;  // extensions present?
  regs.ebx = kEddQueryMagic;
  regs.edx = drive;
  BiosRegs out = bios_call(0x13, regs);
  if (out.carry() || out.bx() != kEddReplyMagic) return false;
  info->device = drive;
  info->version = out.ah();
  info->interface_support = out.cx();

  info->params.length = sizeof(info->params);
  regs.eax = 0x4800;  // extended drive parameters, into DS:SI
  regs.esi = offset_of(&info->params);
  bios_call(0x13, &regs, nullptr);

  regs.eax = 0x0800;  // legacy CHS geometry; ES:DI = 0:0 guards against BIOSes that write there
  regs.es = 0;
  regs.edi = 0;
  out = bios_call(0x13, regs);
  if (!out.carry()) {
    info->legacy_max_cylinder = static_cast<uint16_t>(out.ch() + ((out.cl() & 0xC0) << 2));
    info->legacy_max_head = out.dh();
    info->legacy_sectors_per_track = out.cl() & 0x3F;
  }
  return true;
}

// The signature is stored even when the sector lacks the 55AA mark; only a marked one counts.
alignas(16) uint8_t sector[4096];  // room for a 4 KiB-sector disk
bool read_mbr_signature(uint8_t drive, uint16_t sector_size, uint32_t* signature) {
  if (!sector_size || sector_size > sizeof(sector)) sector_size = 512;
  memset(sector, 0, sector_size);
  BiosRegs regs = bios_regs();
  regs.eax = 0x0201;  // read one sector: cylinder 0, head 0, sector 1
  regs.ecx = 0x0001;
  regs.edx = drive;
  regs.ebx = offset_of(sector);
  if (bios_call(0x13, regs).carry()) return false;
  memcpy(signature, sector + boot::kMbrSignatureOffset, sizeof(*signature));
  return sector[510] == 0x55 && sector[511] == 0xAA;
}

}  // namespace

void query_edd() {
  bool probe = true, read_mbrs = true;
  char value[8];
  if (command_line_value("edd", value, sizeof(value))) {
    if (equal(value, "skipmbr") || equal(value, "skip"))
      read_mbrs = false;
    else if (equal(value, "off"))
      probe = false;
  }
  if (!probe) return;
  bool quiet = command_line_flag("quiet");
  // A BIOS that hangs here leaves this line on the screen, with the way around it.
  if (!quiet) screen_write("Probing EDD (edd=off to disable)... ");
  boot::EddInfo info;
  for (uint8_t drive = 0x80; drive < 0x80 + boot::kEddMaxMbrSignatures; ++drive) {
    bool known = get_edd_info(drive, &info);
    if (known && boot_params.eddbuf_entries < boot::kEddMaxDevices)
      boot_params.eddbuf[boot_params.eddbuf_entries++] = info;
    uint32_t signature = 0;
    uint32_t index = drive - 0x80u;
    bool valid = read_mbrs &&
                 read_mbr_signature(drive, known ? uint16_t{info.params.bytes_per_sector} : uint16_t{0}, &signature);
    if (read_mbrs) boot_params.edd_mbr_sig_buffer[index] = signature;
    if (valid) boot_params.edd_mbr_sig_buf_entries = static_cast<uint8_t>(index + 1);
  }
  if (!quiet) screen_write("ok\n");
}

}  // namespace kpack::setup16
