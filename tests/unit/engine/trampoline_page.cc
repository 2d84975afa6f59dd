#include <doctest/doctest.h>

#include <cstring>

#include "stub/engine/boot_environment.h"
#include "stub/engine/trampoline_page.h"

using namespace kpack;

namespace {

struct Machine {
  boot::BootParams params{};
  BootEnvironment env;
  Range image{0x100000, 0x1000000};

  Machine() {
    add_e820(0, 0x9FC00, boot::kE820Ram);
    add_e820(0x9FC00, 0x400, 2);
    add_e820(0xF0000, 0x10000, 2);
    add_e820(0x100000, 0x7F00000, boot::kE820Ram);
  }
  void add_e820(uint64_t addr, uint64_t size, uint32_t type) {
    boot::E820Entry& e = params.e820_table[params.e820_entries++];
    e.addr = addr;
    e.size = size;
    e.type = type;
  }
  uint64_t page(uint64_t params_addr) {
    uint64_t p = 0;
    return find_trampoline_page(params, params_addr, env, image, &p) ? p : ~0ull;
  }
};

}  // namespace

TEST_CASE("the trampoline goes to the highest free RAM page below 0x9F000") {
  Machine m;
  CHECK(m.page(0x7FFF000) == 0x9E000);
}

TEST_CASE("the trampoline page avoids the real-mode segment around boot_params, the command line and the initrd") {
  Machine m;
  m.env.command_line = Range{0x9E800, 0x9E900};
  m.env.initrd = Range{0x90000, 0x9D001};  // ends one byte into page 0x9D000
  CHECK(m.page(0x7FFF000) == 0x8F000);
  // QEMU's -kernel: setup at 0x90000, boot_params inside it; its 64 KiB either side are kept.
  m.env.command_line = Range{};
  m.env.initrd = Range{};
  CHECK(m.page(0x90000 + 0x1000) == 0x80000);
}

TEST_CASE("the trampoline page is RAM: reserved entries inside RAM, and no RAM at all") {
  Machine m;
  m.add_e820(0x98000, 0x7800, 2);  // reserved, overlapping the RAM entry
  CHECK(m.page(0x7FFF000) == 0x97000);
  Machine none;
  none.params.e820_entries = 0;
  none.add_e820(0x100000, 0x100000, boot::kE820Ram);
  CHECK(none.page(0x7FFF000) == ~0ull);
}

TEST_CASE("command_line_number reads key=N, the last one winning, and ignores what is not a number") {
  const char* text = "console=ttyS0 kpack.cpus=4 xkpack.cpus=9 kpack.cpus=12 kpack.cpus=3x kpack.cpus= kpack.cpusy=5";
  CHECK(command_line_number(text, std::strlen(text), "kpack.cpus", 64) == 12);
  CHECK(command_line_number(text, std::strlen(text), "kpack.other", 64) == 64);
  const char* one = "kpack.cpus=1";
  CHECK(command_line_number(one, std::strlen(one), "kpack.cpus", 64) == 1);
  CHECK(command_line_number(one, std::strlen(one) - 1, "kpack.cpus", 64) == 64);  // "kpack.cpus=" only
}
