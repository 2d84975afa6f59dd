// Regression tests for bugs found by the fuzzers (fuzz/) and the bad-input suite (tests/bad_input).
// Each case names the function that was fixed and rebuilds the smallest input that showed it.
#include <doctest/doctest.h>

#include <memory>

#include "boot_environment.h"
#include "image_writer.h"
#include "kernel_input.h"
#include "layout.h"
#include "simulated_memory.h"
#include "synthetic_kernel.h"

using namespace kpack;

// stub/boot_environment.cc, add_usable_ram: a RAM entry whose start lies within a page of 2^64
// survived the clamp to 4 GiB, and aligning its start up wrapped to 0 — so all of 0..4 GiB,
// BIOS data and MMIO holes included, became free memory for the kernel.
TEST_CASE("regression: an e820 RAM entry near 2^64 adds no free memory") {
  auto memory = std::make_unique<test::SimulatedMemory>(0x90000, 0x10000);
  boot::BootParams params{};
  params.e820_entries = 2;
  params.e820_table[0] = {0x100000, 0x1000000, boot::kE820Ram};
  params.e820_table[1] = {0xFFFFFFFFFFFFF001ull, 0xFFE, boot::kE820Ram};
  BootEnvironment env;
  REQUIRE(read_boot_environment(params, 0x90000, *memory, &env).ok());
  REQUIRE(env.free.count() == 1);
  CHECK(env.free.at(0).begin == 0x100000);
  CHECK(env.free.at(0).end == 0x1100000);
}

// packer/image_writer.cc, build_payload: a raw image stores the kernel's whole physical span. A
// valid ELF with two small segments 3.7 GiB apart made `kpack --raw` allocate and zero that much,
// dying of std::bad_alloc (SIGABRT) under any memory limit. It is now refused up front.
TEST_CASE("regression: a raw image of a kernel spanning 3.7 GiB is refused, not allocated") {
  Result<KernelInput> input =
      kernel_input_from_elf(test::make_kernel_elf({{0x1000000, 0x1000, 0x1000}, {0xF0000000, 0x1000, 0x1000}}), "huge.elf");
  REQUIRE(input.ok());
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  Result<std::vector<uint8_t>> image = build_image(*input, options, built_in_blobs(), "out.img");
  REQUIRE_FALSE(image.ok());
  CHECK(image.error().message.find("span") != std::string::npos);
}

// packer/layout.cc, rewrite: program headers were matched to their new place by file offset and
// size alone. Two bss-only segments (p_filesz 0) at one offset both took the first one's place,
// the rewritten ELF had overlapping segments, and `kpack --raw` died on __builtin_trap (SIGILL).
TEST_CASE("regression: two bss-only segments at one file offset survive both layouts") {
  Result<KernelInput> input =
      kernel_input_from_elf(test::make_kernel_elf({{0x1000000, 0, 0x1000}, {0x1200000, 0, 0x2000}}), "bss.elf");
  REQUIRE(input.ok());
  for (const PayloadElf& out : {layout_mirrored(*input, 0x1000), layout_compact(*input)}) {
    KernelHeaders again;
    REQUIRE(parse_kernel_headers(out.bytes.data(), out.bytes.size(), out.bytes.size(), &again).ok());
    REQUIRE(again.segment_count == 2);
    CHECK(again.physical.begin == 0x1000000);
    CHECK(again.physical.end == 0x1202000);
  }
}
