// boot_params from hvm_start_info (stub/entry/pvh_boot_params.h), field by field as the kernel's
// init_pvh_bootparams fills its own, and the refusals of a damaged hvm_start_info.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>

#include "stub/entry/pvh_boot_params.h"

using namespace kpack;

namespace {

constexpr uint64_t kLimit = 1ull << 32;

pvh::StartInfo start_info() {
  pvh::StartInfo info{};
  info.magic = pvh::kStartInfoMagic;
  info.version = 1;
  info.nr_modules = 1;
  info.modlist_paddr = 0x7000;
  info.cmdline_paddr = 0x8000;
  info.rsdp_paddr = 0xF5A40;
  info.memmap_paddr = 0x9000;
  info.memmap_entries = 3;
  return info;
}

}  // namespace

TEST_CASE("PVH: boot_params as init_pvh_bootparams makes them, with the RSDP and cmdline_size") {
  pvh::MemmapEntry map[3]{};
  map[0].addr = 0, map[0].size = 0x9FC00, map[0].type = 1;
  map[1].addr = 0xF0000, map[1].size = 0x10000, map[1].type = 2;
  map[2].addr = 0x100000, map[2].size = 0x1FF00000, map[2].type = 1;
  pvh::Module initrd{};
  initrd.paddr = 0x1'2345'6000, initrd.size = 0x1'0000'1000;
  auto params = std::make_unique<boot::BootParams>();
  std::memset(static_cast<void*>(params.get()), 0xAA, sizeof(*params));
  pvh::StartInfo info = start_info();
  REQUIRE(check_pvh_start_info(info, kLimit).ok());
  boot_params_from_start_info(info, map, &initrd, params.get());

  CHECK(params->e820_entries == 4);
  CHECK(params->e820_table[0].addr == 0);
  CHECK(params->e820_table[0].size == 0x9FC00);
  CHECK(params->e820_table[0].type == 1);
  CHECK(params->e820_table[1].addr == 0xF0000);
  CHECK(params->e820_table[1].type == 2);
  CHECK(params->e820_table[2].size == 0x1FF00000);
  // The ISA range, reserved, after the VMM's entries.
  CHECK(params->e820_table[3].addr == 0xA0000);
  CHECK(params->e820_table[3].size == 0x60000);
  CHECK(params->e820_table[3].type == boot::kE820Reserved);
  CHECK(params->e820_table[4].addr == 0);
  CHECK(params->hdr.cmd_line_ptr == 0x8000);
  CHECK(params->ext_cmd_line_ptr == 0);
  CHECK(params->hdr.ramdisk_image == 0x23456000);
  CHECK(params->ext_ramdisk_image == 1);
  CHECK(params->hdr.ramdisk_size == 0x1000);
  CHECK(params->ext_ramdisk_size == 1);
  CHECK(params->hdr.version == 0x020C);
  CHECK(params->hdr.type_of_loader == 0xB0);
  CHECK(params->hdr.cmdline_size == 2047);
  CHECK(params->acpi_rsdp_addr == 0xF5A40);
  // Everything else is zero, as in the kernel's pvh_bootparams.
  CHECK(params->hdr.loadflags == 0);
  CHECK(params->hdr.setup_data == 0);
  CHECK(params->hdr.boot_flag == 0);
  CHECK(params->screen_info.orig_video_isVGA == 0);
  CHECK(params->efi_info.efi_loader_signature == 0);
}

TEST_CASE("PVH: no module, no initrd") {
  pvh::MemmapEntry map[1]{};
  map[0].size = 0x10000000, map[0].type = 1;
  pvh::StartInfo info = start_info();
  info.nr_modules = 0;
  info.memmap_entries = 1;
  auto params = std::make_unique<boot::BootParams>();
  boot_params_from_start_info(info, map, nullptr, params.get());
  CHECK(params->hdr.ramdisk_image == 0);
  CHECK(params->hdr.ramdisk_size == 0);
  CHECK(params->e820_entries == 2);
}

TEST_CASE("PVH: a damaged hvm_start_info is refused with its reason") {
  pvh::StartInfo info = start_info();
  info.magic = 0x12345678;
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) == "PVH: hvm_start_info has a wrong magic");
  info = start_info();
  info.version = 0;
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) ==
        "PVH: hvm_start_info has no memory map (version, entries)");
  info = start_info();
  info.memmap_entries = 0;
  CHECK_FALSE(check_pvh_start_info(info, kLimit).ok());
  info = start_info();
  info.memmap_entries = 128;  // with the ISA range, one more than the zero page holds
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) ==
        "PVH: the memory map has more entries than the zero page holds");
  info.memmap_entries = 127;
  CHECK(check_pvh_start_info(info, kLimit).ok());
  info = start_info();
  info.memmap_paddr = kLimit - 24;
  info.memmap_entries = 2;
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) == "PVH: the memory map lies out of reach");
  info.memmap_paddr = ~0ull - 8;  // no wrap-around
  CHECK_FALSE(check_pvh_start_info(info, kLimit).ok());
  info = start_info();
  info.cmdline_paddr = kLimit - 100;
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) == "PVH: the command line lies out of reach");
  info = start_info();
  info.modlist_paddr = kLimit;
  CHECK(std::string(check_pvh_start_info(info, kLimit).message) == "PVH: the module list lies out of reach");
  info.nr_modules = 0;  // no modules: the list is not read
  CHECK(check_pvh_start_info(info, kLimit).ok());
}
