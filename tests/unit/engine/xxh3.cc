#include <doctest/doctest.h>

#include <xxhash.h>

#include <cstdint>
#include <vector>

#include "stub/engine/xxh3.h"
#include "tests/support/skip.h"

using namespace kpack;

namespace {

// Every length class XXH3 treats on its own path (0, 1-3, 4-8, 9-16, 17-128, 129-240, then the
// stripes, blocks of 1 KiB and the last partial stripe), and a frame-sized input.
const size_t kLengths[] = {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1023, 1024, 1025, 4103, (1u << 20) + 13};

std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = 0x9E3779B9;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1664525 + 1013904223) >> 24);
  return bytes;
}

}  // namespace

TEST_CASE("xxh3: the empty input has XXH3-64's published digest") {
  CHECK(xxh3_64_sse2(nullptr, 0) == 0x2D06800538D394C2ull);
  CHECK(xxh3_64(nullptr, 0) == 0x2D06800538D394C2ull);
}

TEST_CASE("xxh3: the SSE2 build agrees with Debian's libxxhash at every length class") {
  for (size_t length : kLengths) {
    auto bytes = pattern(length);
    CAPTURE(length);
    CHECK(xxh3_64_sse2(bytes.data(), length) == XXH3_64bits(bytes.data(), length));
    CHECK(xxh3_64(bytes.data(), length) == XXH3_64bits(bytes.data(), length));
  }
}

TEST_CASE("xxh3: the AVX2 build agrees with Debian's libxxhash, where this CPU runs it") {
  // The CI machine has AVX2; a machine without it still checks the dispatch above.
  if (!avx2_enabled()) {
    test::skip_case("xxh3.avx2", "this CPU has no AVX2");
    return;
  }
  for (size_t length : kLengths) {
    auto bytes = pattern(length);
    CAPTURE(length);
    CHECK(xxh3_64_avx2(bytes.data(), length) == XXH3_64bits(bytes.data(), length));
  }
}

TEST_CASE("xxh3: one changed byte anywhere in a frame changes the digest") {
  auto bytes = pattern((1u << 20) + 13);
  const uint64_t digest = xxh3_64(bytes.data(), bytes.size());
  for (size_t at : {size_t{0}, size_t{63}, size_t{1024}, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(at);
    bytes[at] ^= 0x01;
    CHECK(xxh3_64(bytes.data(), bytes.size()) != digest);
    bytes[at] ^= 0x01;
  }
  CHECK(xxh3_64(bytes.data(), bytes.size()) == digest);
}
