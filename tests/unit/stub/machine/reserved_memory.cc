// What the command line keeps from the kernel (memmap=, mem=) leaves the stub's free set
// (stub/machine/reserved_memory.h), read from the command line as the kernel reads it.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "stub/machine/reserved_memory.h"
#include "stub/options/kaslr_options.h"

using namespace kpack;

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

// 1 MiB to 512 MiB of RAM, with the command line's reservations taken out.
Ranges free_after(const std::string& command_line) {
  KaslrOptions options = parse_kaslr_options(command_line.c_str(), command_line.size());
  FreeMemory free;
  REQUIRE(free.add({0x100000, 0x20000000}).ok());
  REQUIRE(remove_reserved_memory(options, free).ok());
  Ranges out;
  for (uint32_t i = 0; i < free.count(); ++i) out.push_back({free.at(i).begin, free.at(i).end});
  return out;
}

}  // namespace

TEST_CASE("memmap= regions other than nn@ss, and memory from mem= up, are not the stub's to write") {
  CHECK(free_after("quiet") == Ranges{{0x100000, 0x20000000}});
  // ramoops' region at the top, where the work area would go.
  CHECK(free_after("memmap=1M$0x1fe00000") == Ranges{{0x100000, 0x1fe00000}, {0x1ff00000, 0x20000000}});
  CHECK(free_after("memmap=16M#0x2000000") == Ranges{{0x100000, 0x2000000}, {0x3000000, 0x20000000}});
  CHECK(free_after("memmap=16M!0x4000000") == Ranges{{0x100000, 0x4000000}, {0x5000000, 0x20000000}});
  CHECK(free_after("memmap=1M%0x8000000-1+2") == Ranges{{0x100000, 0x8000000}, {0x8100000, 0x20000000}});
  CHECK(free_after("memmap=1M@0x8000000") == Ranges{{0x100000, 0x20000000}});  // more RAM, nothing less
  CHECK(free_after("mem=256M") == Ranges{{0x100000, 0x10000000}});
  CHECK(free_after("memmap=256M") == Ranges{{0x100000, 0x10000000}});
  // Several in one value, and more than KASLR's four (which then stops randomizing).
  CHECK(free_after("memmap=1M$16M,1M$32M,1M$48M memmap=1M$64M,1M$80M") == Ranges{{0x100000, 0x1000000},
                                                                                 {0x1100000, 0x2000000},
                                                                                 {0x2100000, 0x3000000},
                                                                                 {0x3100000, 0x4000000},
                                                                                 {0x4100000, 0x5000000},
                                                                                 {0x5100000, 0x20000000}});
  // exactmap: only the nn@ss ranges are RAM.
  CHECK(free_after("memmap=exactmap memmap=63M@1M,100M@256M") ==
        Ranges{{0x100000, 0x4000000}, {0x10000000, 0x16400000}});
  // After "--" they are init's.
  CHECK(free_after("-- memmap=1M$0x1fe00000 mem=16M") == Ranges{{0x100000, 0x20000000}});
}

TEST_CASE("more memmap= regions than the stub keeps: it cannot keep clear of them, and says so") {
  std::string line;
  for (uint32_t i = 0; i <= kMaxReservedRanges; ++i)
    line += "memmap=4K$" + std::to_string(0x1000000 + i * 0x10000) + " ";
  KaslrOptions options = parse_kaslr_options(line.c_str(), line.size());
  CHECK(options.memory.overflow);
  CHECK(options.too_many_memmaps);
  FreeMemory free;
  REQUIRE(free.add({0x100000, 0x20000000}).ok());
  StubStatus status = remove_reserved_memory(options, free);
  REQUIRE_FALSE(status.ok());
  CHECK(std::strcmp(status.message, "more memmap= regions than the stub can keep clear of") == 0);
}
