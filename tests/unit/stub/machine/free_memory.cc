#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "stub/machine/free_memory.h"

using namespace kpack;

namespace {

std::vector<std::pair<uint64_t, uint64_t>> ranges(const FreeMemory& m) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint32_t i = 0; i < m.count(); ++i) out.push_back({m.at(i).begin, m.at(i).end});
  return out;
}

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

}  // namespace

TEST_CASE("FreeMemory merges touching and overlapping ranges and keeps them sorted") {
  FreeMemory m;
  REQUIRE(m.add({0x300000, 0x400000}).ok());
  REQUIRE(m.add({0x100000, 0x200000}).ok());
  CHECK(ranges(m) == Ranges{{0x100000, 0x200000}, {0x300000, 0x400000}});
  REQUIRE(m.add({0x200000, 0x300000}).ok());
  CHECK(ranges(m) == Ranges{{0x100000, 0x400000}});
  REQUIRE(m.add({0x500000, 0x600000}).ok());
  REQUIRE(m.add({0x380000, 0x580000}).ok());
  CHECK(ranges(m) == Ranges{{0x100000, 0x600000}});
}

TEST_CASE("FreeMemory remove splits, trims and drops ranges") {
  FreeMemory m;
  REQUIRE(m.add({0x100000, 0x1000000}).ok());
  REQUIRE(m.remove({0x400000, 0x500000}).ok());
  CHECK(ranges(m) == Ranges{{0x100000, 0x400000}, {0x500000, 0x1000000}});
  REQUIRE(m.remove({0x0, 0x200000}).ok());
  REQUIRE(m.remove({0xF00000, 0x2000000}).ok());
  CHECK(ranges(m) == Ranges{{0x200000, 0x400000}, {0x500000, 0xF00000}});
  REQUIRE(m.remove({0x200000, 0x400000}).ok());
  CHECK(ranges(m) == Ranges{{0x500000, 0xF00000}});
  CHECK(m.contains({0x600000, 0x700000}));
  CHECK_FALSE(m.contains({0x400000, 0x600000}));
}

TEST_CASE("FreeMemory finds the lowest and highest aligned fits") {
  FreeMemory m;
  REQUIRE(m.add({0x100000, 0x1F00000}).ok());
  REQUIRE(m.remove({0x300000, 0x400000}).ok());
  uint64_t at = 0;
  REQUIRE(m.lowest_fit(0x200000, 0x200000, 0, &at));
  CHECK(at == 0x400000);  // 0x200000 would run into the hole at 0x300000
  REQUIRE(m.lowest_fit(0x100000, 0x200000, 0, &at));
  CHECK(at == 0x200000);
  REQUIRE(m.lowest_fit(0x100000, 0x200000, 0x1000000, &at));
  CHECK(at == 0x1000000);
  CHECK_FALSE(m.lowest_fit(0x2000000, 0x200000, 0, &at));
  REQUIRE(m.highest_fit(0x80000, 0x1000, &at));
  CHECK(at == 0x1F00000 - 0x80000);
  CHECK_FALSE(m.highest_fit(0x2000000, 0x1000, &at));
}

TEST_CASE("FreeMemory reports running out of entries instead of dropping one") {
  FreeMemory m;
  for (uint32_t i = 0; i < FreeMemory::kCapacity; ++i) REQUIRE(m.add({i * 0x2000ull, i * 0x2000ull + 0x1000}).ok());
  CHECK_FALSE(m.add({0x10000000, 0x10001000}).ok());
  CHECK_FALSE(m.remove({0x100, 0x200}).ok());
  CHECK(m.count() == FreeMemory::kCapacity);
}
