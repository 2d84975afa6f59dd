#include <doctest/doctest.h>

#include <xxhash.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "stub/unpack/xxh3.h"
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

// This machine's answers (an AMD EPYC with AVX-512, under Linux): CPUID 0 EAX, 1 ECX, 7 EBX, XCR0.
constexpr VectorSupport kEpycWithAvx512 = {0xD, 0xFED83203, 0xF1BB03A9, 0xE7};
constexpr uint32_t kAvx512Features = 0xD0230000;  // 7 EBX: AVX512F, DQ, IFMA, CD, BW, VL
constexpr uint32_t kOsxsave = 1u << 27;

// The same CPU as QEMU's TCG -cpu max shows it: AVX2, no AVX-512, only AVX's state enabled.
constexpr VectorSupport kWithoutAvx512 = {0xD, 0xFED83203, 0xF1BB03A9 & ~kAvx512Features, 0x7};

// The AVX2 build checked bit for bit against the SSE2 one at every size up to 4 KiB (each short path
// and the first stripes, blocks and partial stripes) and over 3 MiB of random bytes.
void check_equals_sse2(Xxh3Function build) {
  auto bytes = pattern(4096);
  for (size_t length = 0; length <= bytes.size(); ++length) {
    CAPTURE(length);
    REQUIRE(build(bytes.data(), length) == xxh3_64_sse2(bytes.data(), length));
  }
  std::vector<uint64_t> words((3u << 20) / 8 + 3);
  std::mt19937_64 random(20);
  for (uint64_t& w : words) w = random();
  const auto* random_bytes = reinterpret_cast<const uint8_t*>(words.data());
  for (size_t length : {words.size() * 8, size_t{3} << 20, (size_t{1} << 20) + 7})
    for (size_t offset : {0, 1, 13}) {
      CAPTURE(length);
      CAPTURE(offset);
      CHECK(build(random_bytes + offset, length - offset) == xxh3_64_sse2(random_bytes + offset, length - offset));
    }
}

}  // namespace

TEST_CASE("xxh3: AVX2 where the running code enabled its state, from recorded CPUID and XCR0") {
  CHECK(xxh3_build_for(kEpycWithAvx512) == Xxh3Build::kAvx2);  // AVX-512 loses on cold frames (xxh3.h)
  CHECK(xxh3_build_for(kWithoutAvx512) == Xxh3Build::kAvx2);
  VectorSupport cpu = kEpycWithAvx512;
  cpu.xcr0 = 0x3;  // the firmware left AVX's state off
  CHECK(xxh3_build_for(cpu) == Xxh3Build::kSse2);
  cpu = kEpycWithAvx512;
  cpu.leaf7_ebx &= ~(1u << 5);  // no AVX2
  CHECK(xxh3_build_for(cpu) == Xxh3Build::kSse2);
  cpu = kEpycWithAvx512;
  cpu.leaf1_ecx &= ~kOsxsave;  // before CR4.OSXSAVE is set, XCR0 means nothing
  CHECK(xxh3_build_for(cpu) == Xxh3Build::kSse2);
  cpu = kEpycWithAvx512;
  cpu.max_leaf = 6;  // no leaf 7 to ask
  CHECK(xxh3_build_for(cpu) == Xxh3Build::kSse2);
  CHECK(std::string(xxh3_build_name(Xxh3Build::kAvx2)) == "AVX2");
  CHECK(std::string(xxh3_build_name(Xxh3Build::kSse2)) == "SSE2");
}

TEST_CASE("xxh3: this CPU's pick is the build for its own CPUID and XCR0") {
  Xxh3Build build = xxh3_build_for_this_cpu();
  CHECK(build == xxh3_build_for(vector_support_of_this_cpu()));
  Xxh3Function expected = build == Xxh3Build::kAvx2 ? xxh3_64_avx2 : xxh3_64_sse2;
  CHECK(reinterpret_cast<uintptr_t>(xxh3_for_this_cpu()) == reinterpret_cast<uintptr_t>(expected));
}

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
  if (xxh3_build_for_this_cpu() == Xxh3Build::kSse2) {
    test::skip_case("xxh3.avx2", "this CPU has no AVX2");
    return;
  }
  for (size_t length : kLengths) {
    auto bytes = pattern(length);
    CAPTURE(length);
    CHECK(xxh3_64_avx2(bytes.data(), length) == XXH3_64bits(bytes.data(), length));
  }
  check_equals_sse2(xxh3_64_avx2);
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
