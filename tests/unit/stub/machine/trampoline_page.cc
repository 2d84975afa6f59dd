#include <doctest/doctest.h>

#include <cstring>

#include "stub/machine/boot_environment.h"
#include "stub/machine/trampoline_page.h"
#include "stub/options/stub_options.h"
#include "tests/support/simulated_memory.h"

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
  uint64_t pages(uint64_t params_addr, uint64_t size) {
    uint64_t p = 0;
    return find_low_pages(params, params_addr, env, image, size, &p) ? p : ~0ull;
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

TEST_CASE("the trampoline page avoids setup_data, SETUP_INDIRECT targets and the EFI map below 1 MiB") {
  Machine m;
  // Nodes a loader put at the top of low memory, far from boot_params (at 127 MiB here).
  m.env.low_loader_data[0] = Range{0x9E000, 0x9E020};
  m.env.low_loader_data[1] = Range{0x9C800, 0x9D800};
  m.env.low_loader_data_count = 2;
  CHECK(m.page(0x7FFF000) == 0x9B000);
  // More loader data than the environment kept: no page is known to be free.
  m.env.low_loader_data_overflow = true;
  CHECK(m.page(0x7FFF000) == ~0ull);
}

TEST_CASE("the trampoline page keeps off what the command line reserves (memmap=)") {
  Machine m;
  const char* line = "memmap=8K$0x9D000 memmap=4K#0x9C000";
  KaslrOptions options = parse_kaslr_options(line, std::strlen(line));
  m.env.command_line_memory = &options;
  CHECK(m.page(0x7FFF000) == 0x9B000);
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

TEST_CASE("the paging-level switch gets two whole free pages, the highest that fit") {
  Machine m;
  CHECK(m.pages(0x7FFF000, kLevelSwitchSize) == 0x9D000);
  m.add_e820(0x9D000, 0x1000, 2);  // a reserved page leaves one free page above it: too small
  CHECK(m.pages(0x7FFF000, kLevelSwitchSize) == 0x9B000);
  CHECK(m.page(0x7FFF000) == 0x9E000);
}

TEST_CASE("5-level paging: the kernel supports it, the CPU has LA57, and no no5lvl") {
  auto no5lvl = [](const char* text) { return parse_stub_options(text, strlen(text)).no_five_level; };
  CHECK(wants_five_level_paging(true, true, no5lvl("console=ttyS0 quiet")));
  CHECK_FALSE(wants_five_level_paging(false, true, no5lvl("console=ttyS0 quiet")));
  CHECK_FALSE(wants_five_level_paging(true, false, no5lvl("console=ttyS0 quiet")));
  CHECK_FALSE(wants_five_level_paging(true, true, no5lvl("console=ttyS0 no5lvl quiet")));
  CHECK(wants_five_level_paging(true, true, no5lvl("no5lvl=1 xno5lvl")));
  CHECK(wants_five_level_paging(true, true, no5lvl("")));
}

TEST_CASE("the switched root: a PML5 naming the current PML4, or a copy of the PML4 a PML5 names") {
  test::SimulatedMemory memory(0, 0x200000);
  constexpr uint64_t kPml4 = 0x150000, kPml5 = 0x151000, kLowRoot = 0x9D000;
  auto table = [&](uint64_t addr) { return reinterpret_cast<uint64_t*>(memory.at(addr)); };
  for (int i = 0; i < 512; ++i) table(kPml4)[i] = i < 2 ? 0x160003 + i * 0x1000 : 0;
  for (int i = 0; i < 512; ++i) table(kPml5)[i] = i == 0 ? kPml4 | 0x63 : 0;

  // Up: the PML5's one entry, whatever flag bits CR3 carries (PCD, PWT).
  REQUIRE(build_switched_root(memory, kPml4 | 0x18, true, kLowRoot));
  CHECK(table(kLowRoot)[0] == (kPml4 | 0x3));
  for (int i = 1; i < 512; ++i) CHECK(table(kLowRoot)[i] == 0);

  // Down: the PML4 itself, below 4 GiB.
  REQUIRE(build_switched_root(memory, kPml5, false, kLowRoot));
  CHECK(table(kLowRoot)[0] == 0x160003);
  CHECK(table(kLowRoot)[1] == 0x161003);
  CHECK(table(kLowRoot)[2] == 0);

  // A PML5 without a present first entry, a root outside memory or one above 4 GiB: no switch.
  table(kPml5)[0] = 0;
  CHECK_FALSE(build_switched_root(memory, kPml5, false, kLowRoot));
  CHECK_FALSE(build_switched_root(memory, kPml4, true, 0x300000));
}
