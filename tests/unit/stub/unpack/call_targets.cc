// Call targets coded (formats/call_targets.h): exact bytes for each rule of the scan, and every
// coding decoded back, whatever the bytes and wherever the frame lies.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "formats/call_targets.h"

using namespace kpack;

namespace {

std::vector<uint8_t> coded(std::vector<uint8_t> bytes, uint64_t position) {
  code_call_targets(bytes.data(), bytes.size(), position);
  return bytes;
}

std::vector<uint8_t> decoded(std::vector<uint8_t> bytes, uint64_t position) {
  decode_call_targets(bytes.data(), bytes.size(), position);
  return bytes;
}

// The rule one byte at a time, as formats/call_targets.h states it: what its vector scan must give.
std::vector<uint8_t> coded_by_rule(std::vector<uint8_t> bytes, uint64_t position) {
  for (uint64_t i = 0; i + 5 <= bytes.size();) {
    if (bytes[i] != 0xE8 && bytes[i] != 0xE9) {
      ++i;
      continue;
    }
    if (bytes[i + 4] == 0x00 || bytes[i + 4] == 0xFF) {
      uint32_t target = load_le<uint32_t>(&bytes[i + 1]) + static_cast<uint32_t>(position + i + 5);
      uint32_t bits = target & 0x1FFFFFF;
      store_le<uint32_t>(&bytes[i + 1], bits & 0x1000000 ? bits | 0xFE000000 : bits);
    }
    i += 5;
  }
  return bytes;
}

// Bytes where opcodes are dense and most operands near ones, so that they overlap each other and
// the scan's 16-byte blocks every way.
std::vector<uint8_t> call_heavy_bytes(std::mt19937_64& random, uint64_t size) {
  const uint8_t pick[] = {0xE8, 0xE9, 0x00, 0xFF, 0x12, 0xE8};
  std::vector<uint8_t> bytes(size);
  for (uint8_t& b : bytes) b = random() % 3 ? pick[random() % 6] : static_cast<uint8_t>(random());
  return bytes;
}

}  // namespace

TEST_CASE("a call's and a jump's distance become their target") {
  // call +0x10 at 0x1000 (next instruction 0x1005): target 0x1015; jmp -0x10 at 0x1005: 0x0ffa.
  std::vector<uint8_t> bytes = {0xE8, 0x10, 0x00, 0x00, 0x00, 0xE9, 0xF0, 0xFF, 0xFF, 0xFF};
  std::vector<uint8_t> want = {0xE8, 0x15, 0x10, 0x00, 0x00, 0xE9, 0xFA, 0x0F, 0x00, 0x00};
  CHECK(coded(bytes, 0x1000) == want);
  CHECK(decoded(want, 0x1000) == bytes);
  // The same target called from another frame, further on, is coded to the same bytes.
  std::vector<uint8_t> later = {0x90, 0xE8, 0x0F, 0xF0, 0xFF, 0xFF};  // at 0x2000: 0x2006 - 0xff1
  CHECK(coded(later, 0x2000) == std::vector<uint8_t>{0x90, 0xE8, 0x15, 0x10, 0x00, 0x00});
}

TEST_CASE("targets are kept to 25 bits, so a coded operand is found again") {
  // 0x00fffff5 + 0x20 = 0x01000015: bit 24 set, sign-extended to 0xff000015.
  std::vector<uint8_t> bytes = {0xE8, 0x20, 0x00, 0x00, 0x00};
  std::vector<uint8_t> want = {0xE8, 0x15, 0x00, 0x00, 0xFF};
  CHECK(coded(bytes, 0x00fffff0) == want);
  CHECK(decoded(want, 0x00fffff0) == bytes);
  // Positions count modulo 2^25: a frame 32 MiB further codes the same call the same way.
  CHECK(coded(bytes, 0x02fffff0) == want);
}

TEST_CASE("an operand beyond 16 MiB is left, and stepped over like any other") {
  // The first operand's top byte is 0x12: not coded. Its first byte, E8, is not an opcode: taken
  // for one, its operand (01 00 12 00) would have been coded.
  std::vector<uint8_t> bytes = {0xE8, 0xE8, 0x01, 0x00, 0x12, 0x00, 0xE9, 0x00, 0x00, 0x00, 0x00};
  std::vector<uint8_t> want = {0xE8, 0xE8, 0x01, 0x00, 0x12, 0x00, 0xE9, 0x0B, 0x00, 0x00, 0x00};
  CHECK(coded(bytes, 0) == want);
  CHECK(decoded(want, 0) == bytes);
}

TEST_CASE("an opcode whose operand would pass the frame's end is left") {
  for (uint64_t size = 1; size <= 13; ++size) {
    CAPTURE(size);
    std::vector<uint8_t> bytes(size, 0x00);
    bytes[size - 1] = 0xE8;                 // its operand would pass the end
    if (size >= 6) bytes[size - 6] = 0xE9;  // distance 0, coded to its next instruction, size - 1
    std::vector<uint8_t> want = bytes;
    if (size >= 6) want[size - 5] = static_cast<uint8_t>(size - 1);
    CHECK(coded(bytes, 0) == want);
  }
}

TEST_CASE("the scan codes exactly what the rule says, at every length and alignment") {
  std::mt19937_64 random(7);
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = call_heavy_bytes(random, random() % 160);
    uint64_t position = random() % (uint64_t{1} << 36);
    CAPTURE(round);
    REQUIRE(coded(bytes, position) == coded_by_rule(bytes, position));
  }
  std::vector<uint8_t> big = call_heavy_bytes(random, 1 << 20);
  CHECK(coded(big, 0x4000) == coded_by_rule(big, 0x4000));
}

TEST_CASE("decoding undoes coding, for any bytes at any position") {
  std::mt19937_64 random(45);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes = call_heavy_bytes(random, random() % 80);
    uint64_t position = round % 4 == 0 ? (uint64_t{1} << 32) - 3 : random() % (uint64_t{1} << 40);
    CAPTURE(round);
    CHECK(decoded(coded(bytes, position), position) == bytes);
  }
  // Megabytes, for the eight-byte steps: every byte value, opcodes where they fall.
  std::vector<uint8_t> big(3 << 20);
  for (uint8_t& b : big) b = static_cast<uint8_t>(random() % 7 == 0 ? 0xE8 : random());
  std::vector<uint8_t> code = coded(big, 0x1234567);
  CHECK(code != big);
  CHECK(decoded(code, 0x1234567) == big);
}
