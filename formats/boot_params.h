// The Linux x86 boot protocol (Documentation/arch/x86/boot.rst, zero-page.rst), version 2.15:
// the setup header at file offset 0x1F1 and the 4096-byte boot_params ("zero page") that holds it.
// This header is the one definition used by the packer, the stub, the tests and, through
// gen_asm_offsets, the assembly.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack::boot {

inline constexpr uint32_t kSectorSize = 512;
inline constexpr uint32_t kSetupHeaderOffset = 0x1F1;  // in the file and in boot_params
inline constexpr uint16_t kBootFlag = 0xAA55;
inline constexpr uint32_t kHeaderMagic = 0x53726448;  // "HdrS"
inline constexpr uint16_t kProtocolVersion = 0x020F;  // 2.15
inline constexpr uint32_t kDefaultSetupSects = 4;     // what setup_sects == 0 means

// loadflags
inline constexpr uint8_t kLoadedHigh = 1 << 0;
inline constexpr uint8_t kKaslrFlag = 1 << 1;
inline constexpr uint8_t kQuietFlag = 1 << 5;
inline constexpr uint8_t kKeepSegments = 1 << 6;
inline constexpr uint8_t kCanUseHeap = 1 << 7;

// xloadflags
inline constexpr uint16_t kXlfKernel64 = 1 << 0;
inline constexpr uint16_t kXlfCanBeLoadedAbove4G = 1 << 1;
inline constexpr uint16_t kXlfEfiHandover64 = 1 << 3;
// The 64-bit entry may be entered with 5-level paging on (kexec_file_load from a 5-level kernel
// refuses an image without it); the kernel itself runs with 5 levels (CONFIG_X86_5LEVEL).
inline constexpr uint16_t kXlf5Level = 1 << 5;
inline constexpr uint16_t kXlf5LevelEnabled = 1 << 6;

// The 64-bit entry point sits this far into the protected-mode part (boot.rst, "64-bit boot protocol").
inline constexpr uint32_t kEntry64Offset = 0x200;
inline constexpr uint32_t kDefaultCode32Start = 0x100000;

// Segment selectors the boot protocol hands over with: flat 4 GiB code and data.
// The boot GDT's 32-bit code segment, the Linux decompressor's __KERNEL32_CS: only the trip through
// compatibility mode that switches the paging levels uses it.
inline constexpr uint16_t kBootCode32Selector = 0x08;
inline constexpr uint16_t kBootCodeSelector = 0x10;
inline constexpr uint16_t kBootDataSelector = 0x18;

struct SetupHeader {
  uint8_t setup_sects;
  ul16 root_flags;
  ul32 syssize;
  ul16 ram_size;
  ul16 vid_mode;
  ul16 root_dev;
  ul16 boot_flag;
  ul16 jump;
  ul32 header;
  ul16 version;
  ul32 realmode_swtch;
  ul16 start_sys_seg;
  ul16 kernel_version;
  uint8_t type_of_loader;
  uint8_t loadflags;
  ul16 setup_move_size;
  ul32 code32_start;
  ul32 ramdisk_image;
  ul32 ramdisk_size;
  ul32 bootsect_kludge;
  ul16 heap_end_ptr;
  uint8_t ext_loader_ver;
  uint8_t ext_loader_type;
  ul32 cmd_line_ptr;
  ul32 initrd_addr_max;
  ul32 kernel_alignment;
  uint8_t relocatable_kernel;
  uint8_t min_alignment;
  ul16 xloadflags;
  ul32 cmdline_size;
  ul32 hardware_subarch;
  ul64 hardware_subarch_data;
  ul32 payload_offset;
  ul32 payload_length;
  ul64 setup_data;
  ul64 pref_address;
  ul32 init_size;
  ul32 handover_offset;
  ul32 kernel_info_offset;
};

// Offsets are asserted relative to the file (and boot_params), as the protocol documents them.
#define KPACK_HDR_AT(field, offset) static_assert(kSetupHeaderOffset + offsetof(SetupHeader, field) == (offset), #field)
KPACK_HDR_AT(setup_sects, 0x1F1);
KPACK_HDR_AT(root_flags, 0x1F2);
KPACK_HDR_AT(syssize, 0x1F4);
KPACK_HDR_AT(ram_size, 0x1F8);
KPACK_HDR_AT(vid_mode, 0x1FA);
KPACK_HDR_AT(root_dev, 0x1FC);
KPACK_HDR_AT(boot_flag, 0x1FE);
KPACK_HDR_AT(jump, 0x200);
KPACK_HDR_AT(header, 0x202);
KPACK_HDR_AT(version, 0x206);
KPACK_HDR_AT(realmode_swtch, 0x208);
KPACK_HDR_AT(start_sys_seg, 0x20C);
KPACK_HDR_AT(kernel_version, 0x20E);
KPACK_HDR_AT(type_of_loader, 0x210);
KPACK_HDR_AT(loadflags, 0x211);
KPACK_HDR_AT(setup_move_size, 0x212);
KPACK_HDR_AT(code32_start, 0x214);
KPACK_HDR_AT(ramdisk_image, 0x218);
KPACK_HDR_AT(ramdisk_size, 0x21C);
KPACK_HDR_AT(bootsect_kludge, 0x220);
KPACK_HDR_AT(heap_end_ptr, 0x224);
KPACK_HDR_AT(ext_loader_ver, 0x226);
KPACK_HDR_AT(ext_loader_type, 0x227);
KPACK_HDR_AT(cmd_line_ptr, 0x228);
KPACK_HDR_AT(initrd_addr_max, 0x22C);
KPACK_HDR_AT(kernel_alignment, 0x230);
KPACK_HDR_AT(relocatable_kernel, 0x234);
KPACK_HDR_AT(min_alignment, 0x235);
KPACK_HDR_AT(xloadflags, 0x236);
KPACK_HDR_AT(cmdline_size, 0x238);
KPACK_HDR_AT(hardware_subarch, 0x23C);
KPACK_HDR_AT(hardware_subarch_data, 0x240);
KPACK_HDR_AT(payload_offset, 0x248);
KPACK_HDR_AT(payload_length, 0x24C);
KPACK_HDR_AT(setup_data, 0x250);
KPACK_HDR_AT(pref_address, 0x258);
KPACK_HDR_AT(init_size, 0x260);
KPACK_HDR_AT(handover_offset, 0x264);
KPACK_HDR_AT(kernel_info_offset, 0x268);
#undef KPACK_HDR_AT
inline constexpr uint32_t kSetupHeaderEnd = kSetupHeaderOffset + sizeof(SetupHeader);
static_assert(kSetupHeaderEnd == 0x26C);

// The 2-byte short jump at 0x200 also tells how long the header is: it lands right after it.
inline constexpr uint16_t kHeaderJump = 0xEB | ((kSetupHeaderEnd - 0x202) << 8);

// e820 memory map entry, as the BIOS (int 0x15, eax=0xE820) returns it.
struct E820Entry {
  ul64 addr;
  ul64 size;
  ul32 type;
};
static_assert(sizeof(E820Entry) == 20);
inline constexpr uint32_t kE820Ram = 1;
inline constexpr uint32_t kE820Reserved = 2;
inline constexpr uint32_t kE820Acpi = 3;
inline constexpr uint32_t kE820Nvs = 4;
inline constexpr uint32_t kE820Unusable = 5;
inline constexpr uint32_t kE820Pmem = 7;
inline constexpr uint32_t kE820SoftReserved = 0xEFFFFFFF;
inline constexpr uint32_t kE820MaxEntries = 128;

// A node of the setup_data list that hdr.setup_data heads.
struct SetupData {
  ul64 next;
  ul32 type;
  ul32 len;
};
static_assert(sizeof(SetupData) == 16);

// setup_data types the stub looks into.
inline constexpr uint32_t kSetupE820Ext = 1;          // e820 entries beyond the zero page's 128
inline constexpr uint32_t kSetupPci = 3;              // a PCI device's option ROM (PciSetupRom)
inline constexpr uint32_t kSetupRngSeed = 9;          // random bytes from the loader (QEMU -kernel)
inline constexpr uint32_t kSetupIndirect = 1u << 31;  // the node points at the real data elsewhere

// The body of a SETUP_INDIRECT node.
struct SetupIndirect {
  ul32 type;
  ul32 reserved;
  ul64 len;
  ul64 addr;
};
static_assert(sizeof(SetupIndirect) == 24);

// A SETUP_PCI node (arch/x86/include/asm/pci.h, struct pci_setup_rom; 64-bit longs): the copy of
// one device's option ROM, its bytes right after this header; len counts from vendor on.
struct PciSetupRom {
  SetupData header;
  ul16 vendor;
  ul16 device_id;
  uint8_t pad[4];
  ul64 rom_length;  // pcilen
  ul64 segment;
  ul64 bus;
  ul64 device;
  ul64 function;
};
static_assert(offsetof(PciSetupRom, vendor) == 16 && offsetof(PciSetupRom, device_id) == 18);
static_assert(offsetof(PciSetupRom, rom_length) == 24 && offsetof(PciSetupRom, segment) == 32);
static_assert(offsetof(PciSetupRom, bus) == 40 && offsetof(PciSetupRom, device) == 48);
static_assert(offsetof(PciSetupRom, function) == 56 && sizeof(PciSetupRom) == 64);

// screen_info (include/uapi/linux/screen_info.h): what the 16-bit setup learnt of the display.
struct ScreenInfo {
  uint8_t orig_x;  // cursor column
  uint8_t orig_y;  // cursor row
  ul16 ext_mem_k;  // INT 15h AH=88h: KiB above 1 MiB
  ul16 orig_video_page;
  uint8_t orig_video_mode;
  uint8_t orig_video_cols;
  uint8_t flags;
  uint8_t unused2;
  ul16 orig_video_ega_bx;  // INT 10h AH=12h BL=10h: BL stays 0x10 on MDA/CGA
  ul16 unused3;
  uint8_t orig_video_lines;
  uint8_t orig_video_isVGA;  // a kVideoType value
  ul16 orig_video_points;    // font height
  ul16 lfb_width;
  ul16 lfb_height;
  ul16 lfb_depth;
  ul32 lfb_base;
  ul32 lfb_size;  // in 64 KiB units, from VBE's total memory
  ul16 cl_magic;
  ul16 cl_offset;
  ul16 lfb_linelength;
  uint8_t red_size;
  uint8_t red_pos;
  uint8_t green_size;
  uint8_t green_pos;
  uint8_t blue_size;
  uint8_t blue_pos;
  uint8_t rsvd_size;
  uint8_t rsvd_pos;
  ul16 vesapm_seg;
  ul16 vesapm_off;
  ul16 pages;
  ul16 vesa_attributes;
  ul32 capabilities;
  ul32 ext_lfb_base;
  uint8_t reserved[2];
};
static_assert(sizeof(ScreenInfo) == 0x40);
static_assert(offsetof(ScreenInfo, ext_mem_k) == 0x02);
static_assert(offsetof(ScreenInfo, orig_video_mode) == 0x06);
static_assert(offsetof(ScreenInfo, orig_video_ega_bx) == 0x0A);
static_assert(offsetof(ScreenInfo, orig_video_lines) == 0x0E);
static_assert(offsetof(ScreenInfo, orig_video_isVGA) == 0x0F);
static_assert(offsetof(ScreenInfo, orig_video_points) == 0x10);
static_assert(offsetof(ScreenInfo, lfb_base) == 0x18);
static_assert(offsetof(ScreenInfo, lfb_linelength) == 0x24);
static_assert(offsetof(ScreenInfo, red_size) == 0x26);
static_assert(offsetof(ScreenInfo, vesapm_seg) == 0x2E);
static_assert(offsetof(ScreenInfo, pages) == 0x32);
static_assert(offsetof(ScreenInfo, capabilities) == 0x36);
static_assert(offsetof(ScreenInfo, ext_lfb_base) == 0x3A);

// screen_info.orig_video_isVGA
inline constexpr uint8_t kVideoTypeVgaColor = 0x01;  // the kernel's VIDEO_TYPE_VGAC: a VGA text console
inline constexpr uint8_t kVideoTypeVesaLfb = 0x23;   // VIDEO_TYPE_VLFB: a VESA linear framebuffer
inline constexpr uint8_t kVideoTypeEfi = 0x70;       // VIDEO_TYPE_EFI: the firmware's GOP framebuffer
// screen_info.capabilities
inline constexpr uint32_t kVideoCapabilitySkipQuirks = 1 << 0;
inline constexpr uint32_t kVideoCapability64BitBase = 1 << 1;

// hdr.vid_mode values (boot.rst, "vid_mode"; loaders turn vga= into them).
inline constexpr uint16_t kVidModeNormal = 0xFFFF;    // vga=normal: 80x25
inline constexpr uint16_t kVidModeExtended = 0xFFFE;  // vga=ext: 80x50 (80x43 on EGA)
inline constexpr uint16_t kVidModeAsk = 0xFFFD;       // vga=ask

// EDD (include/uapi/linux/edd.h): one disk as INT 13h AH=41h/48h/08h describe it.
struct EddDeviceParams {  // INT 13h AH=48h "Get Drive Parameters" result
  ul16 length;
  ul16 info_flags;
  ul32 num_default_cylinders;
  ul32 num_default_heads;
  ul32 sectors_per_track;
  ul64 number_of_sectors;
  ul16 bytes_per_sector;
  ul32 dpte_ptr;
  ul16 key;  // 0xBEDD when the device path below is valid
  uint8_t device_path_info_length;
  uint8_t reserved2;
  ul16 reserved3;
  uint8_t host_bus_type[4];
  uint8_t interface_type[8];
  uint8_t interface_path[8];
  uint8_t device_path[16];
  uint8_t reserved4;
  uint8_t checksum;
};
static_assert(sizeof(EddDeviceParams) == 74);
static_assert(offsetof(EddDeviceParams, bytes_per_sector) == 24);
static_assert(offsetof(EddDeviceParams, host_bus_type) == 36);
static_assert(offsetof(EddDeviceParams, device_path) == 56);

struct EddInfo {
  uint8_t device;            // BIOS drive number, 0x80 and up
  uint8_t version;           // INT 13h AH=41h: AH
  ul16 interface_support;    // INT 13h AH=41h: CX
  ul16 legacy_max_cylinder;  // INT 13h AH=08h
  uint8_t legacy_max_head;
  uint8_t legacy_sectors_per_track;
  EddDeviceParams params;
};
static_assert(sizeof(EddInfo) == 82);
inline constexpr uint32_t kEddMaxDevices = 6;         // EDDMAXNR
inline constexpr uint32_t kEddMaxMbrSignatures = 16;  // EDD_MBR_SIG_MAX
inline constexpr uint32_t kMbrSignatureOffset = 0x1B8;

// ist_info: what INT 15h AX=E980h says of Intel SpeedStep (the stock setup asks on every CPU of
// family 6 and later, whatever the BIOS answers).
struct IstInfo {
  ul32 signature;
  ul32 command;
  ul32 event;
  ul32 perf_level;
};
static_assert(sizeof(IstInfo) == 16);

// efi_info: how the kernel finds the firmware's tables after ExitBootServices.
struct EfiInfo {
  ul32 efi_loader_signature;  // "EL64" for a 64-bit firmware
  ul32 efi_systab;
  ul32 efi_memdesc_size;
  ul32 efi_memdesc_version;
  ul32 efi_memmap;
  ul32 efi_memmap_size;
  ul32 efi_systab_hi;
  ul32 efi_memmap_hi;
};
static_assert(sizeof(EfiInfo) == 0x20);
inline constexpr uint32_t kEfiLoaderSignature64 = 0x34364C45;  // "EL64"

struct BootParams {
  ScreenInfo screen_info;
  uint8_t apm_bios_info[0x14];
  uint8_t pad2[4];
  ul64 tboot_addr;
  IstInfo ist_info;
  ul64 acpi_rsdp_addr;
  uint8_t pad3[8];
  uint8_t hd0_info[16];
  uint8_t hd1_info[16];
  uint8_t sys_desc_table[0x10];
  uint8_t olpc_ofw_header[0x10];
  ul32 ext_ramdisk_image;
  ul32 ext_ramdisk_size;
  ul32 ext_cmd_line_ptr;
  uint8_t pad4[0x70];
  ul32 cc_blob_address;  // SEV-SNP: the firmware's confidential-computing blob, for the kernel
  uint8_t edid_info[0x80];
  EfiInfo efi_info;
  ul32 alt_mem_k;
  ul32 scratch;
  uint8_t e820_entries;
  uint8_t eddbuf_entries;
  uint8_t edd_mbr_sig_buf_entries;
  uint8_t kbd_status;
  uint8_t secure_boot;
  uint8_t pad5[2];
  uint8_t sentinel;
  uint8_t pad6[1];
  SetupHeader hdr;
  uint8_t pad7[0x290 - kSetupHeaderEnd];
  ul32 edd_mbr_sig_buffer[kEddMaxMbrSignatures];
  E820Entry e820_table[kE820MaxEntries];
  uint8_t pad8[48];
  EddInfo eddbuf[kEddMaxDevices];
  uint8_t pad9[276];

  // The command line's address: cmd_line_ptr, and its high half in ext_cmd_line_ptr (64-bit loaders).
  uint64_t command_line_address() const { return hdr.cmd_line_ptr | uint64_t{ext_cmd_line_ptr} << 32; }
  void set_command_line_address(uint64_t address) {
    hdr.cmd_line_ptr = static_cast<uint32_t>(address);
    ext_cmd_line_ptr = static_cast<uint32_t>(address >> 32);
  }
};
static_assert(sizeof(BootParams) == 4096);
static_assert(offsetof(BootParams, apm_bios_info) == 0x040);
static_assert(offsetof(BootParams, ist_info) == 0x060);
static_assert(offsetof(BootParams, acpi_rsdp_addr) == 0x070);
static_assert(offsetof(BootParams, ext_ramdisk_image) == 0x0C0);
static_assert(offsetof(BootParams, ext_ramdisk_size) == 0x0C4);
static_assert(offsetof(BootParams, ext_cmd_line_ptr) == 0x0C8);
static_assert(offsetof(BootParams, cc_blob_address) == 0x13C);
static_assert(offsetof(BootParams, edid_info) == 0x140);
static_assert(offsetof(BootParams, efi_info) == 0x1C0);
static_assert(offsetof(BootParams, alt_mem_k) == 0x1E0);
static_assert(offsetof(BootParams, scratch) == 0x1E4);
static_assert(offsetof(BootParams, e820_entries) == 0x1E8);
static_assert(offsetof(BootParams, eddbuf_entries) == 0x1E9);
static_assert(offsetof(BootParams, edd_mbr_sig_buf_entries) == 0x1EA);
static_assert(offsetof(BootParams, kbd_status) == 0x1EB);
static_assert(offsetof(BootParams, sentinel) == 0x1EF);
static_assert(offsetof(BootParams, hdr) == kSetupHeaderOffset);
static_assert(offsetof(BootParams, edd_mbr_sig_buffer) == 0x290);
static_assert(offsetof(BootParams, e820_table) == 0x2D0);
static_assert(offsetof(BootParams, eddbuf) == 0xD00);

// kernel_info (protocol 2.15), in the protected-mode part at hdr.kernel_info_offset.
inline constexpr uint32_t kKernelInfoMagic = 0x506F544C;  // "LToP"
struct KernelInfo {
  ul32 header;
  ul32 size;
  ul32 size_total;
  ul32 setup_type_max;
};
static_assert(sizeof(KernelInfo) == 16);
static_assert(offsetof(KernelInfo, setup_type_max) == 12);

}  // namespace kpack::boot
