// The kernel relocation table in the engine: both formats parsed from their 0 words, and the
// virtual base moved in simulated memory with every target checked before any write.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <vector>

#include "tests/support/bytes.h"
#include "stub/unpack/kernel_headers.h"
#include "stub/unpack/relocation_table.h"
#include "tests/support/simulated_memory.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kDelta = 0x2a00000;  // a 2 MiB-aligned virtual offset

std::vector<uint8_t> table_of(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) test::append_le32(out, w);
  return out;
}

// Kernel virtual address (low 32 bits) of link-time physical address `paddr`.
uint32_t va(uint64_t paddr) { return relocation_entry(paddr + kStartKernelMap); }

// typical_segments() parsed, and placed at 32 MiB (link address 16 MiB) in simulated RAM.
struct Placed {
  KernelHeaders kernel;
  uint64_t base = 32 * kMiB;
  std::unique_ptr<test::SimulatedMemory> memory = std::make_unique<test::SimulatedMemory>(16 * kMiB, 48 * kMiB);

  Placed() {
    std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
    REQUIRE(parse_kernel_headers(elf.data(), elf.size(), elf.size(), &kernel).ok());
    for (uint32_t i = 0; i < kernel.segment_count; ++i) {
      const LoadSegment& s = kernel.segments[i];
      memory->load(at(s.paddr), std::vector<uint8_t>(elf.begin() + s.offset, elf.begin() + s.offset + s.filesz));
    }
  }
  uint64_t at(uint64_t paddr) const { return base + (paddr - kernel.physical.begin); }
  uint64_t u64(uint64_t paddr) { return load_le<uint64_t>(memory->at(at(paddr))); }
  uint32_t u32(uint64_t paddr) { return load_le<uint32_t>(memory->at(at(paddr))); }
};

}  // namespace

TEST_CASE("physical_target: an entry's link-time physical address, for the packer and the stub alike") {
  CHECK(physical_target(0x81000000u) == 0x1000000);    // the start of .text at 16 MiB
  CHECK(physical_target(0x8304e7f8u) == 0x304e7f8);    // inside .init.data
  CHECK(physical_target(0x7fffffffu) == 0xffffffffu);  // a positive word lies outside the kernel map
}

TEST_CASE("relocation table: the format follows from the number of 0 words") {
  RelocationTable t;
  std::vector<uint8_t> old_format = table_of({0, 10, 11, 12, 0, 20, 0, 30, 31});
  REQUIRE(parse_relocation_table(old_format.data(), old_format.size(), &t).ok());
  CHECK(t.format == RelocationFormat::kWithInverse32);
  CHECK(t.count64() == 3);
  CHECK(t.count_inverse32() == 1);
  CHECK(t.count32() == 2);
  CHECK(t.entries() == 6);

  std::vector<uint8_t> new_format = table_of({0, 10, 0, 30, 31, 32});
  REQUIRE(parse_relocation_table(new_format.data(), new_format.size(), &t).ok());
  CHECK(t.format == RelocationFormat::kWithoutInverse32);
  CHECK(t.count64() == 1);
  CHECK(t.count_inverse32() == 0);
  CHECK(t.count32() == 3);

  std::vector<uint8_t> empty_lists = table_of({0, 0, 0});
  REQUIRE(parse_relocation_table(empty_lists.data(), empty_lists.size(), &t).ok());
  CHECK(t.format == RelocationFormat::kWithInverse32);
  CHECK(t.entries() == 0);
}

TEST_CASE("relocation planes: each word's difference from the one before, its bytes grouped low to high") {
  std::vector<uint8_t> words = table_of({0, 0x81000100, 0x81000108, 0, 0x81200000});
  // Differences 0, 0x81000100, 8, 0x7efffef8 (0 - 0x81000108, mod 2^32), 0x81200000.
  const std::vector<uint8_t> planes = {0x00, 0x00, 0x08, 0xf8, 0x00,   // lowest bytes
                                       0x00, 0x01, 0x00, 0xfe, 0x00,   //
                                       0x00, 0x00, 0x00, 0xff, 0x20,   //
                                       0x00, 0x81, 0x00, 0x7e, 0x81};  // highest bytes
  std::vector<uint8_t> coded(words.size());
  code_relocation_planes(words.data(), words.size(), coded.data());
  CHECK(coded == planes);
  std::vector<uint8_t> decoded(words.size());
  decode_relocation_planes(coded.data(), coded.size(), decoded.data());
  CHECK(decoded == words);

  // Bytes past the last whole word stay as they are, both ways (parse_relocation_table refuses them).
  std::vector<uint8_t> ragged = table_of({0, 0x81000010});
  ragged.insert(ragged.end(), {0xaa, 0xbb});
  std::vector<uint8_t> ragged_coded(ragged.size()), ragged_back(ragged.size());
  code_relocation_planes(ragged.data(), ragged.size(), ragged_coded.data());
  CHECK(ragged_coded == std::vector<uint8_t>{0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x81, 0xaa, 0xbb});
  decode_relocation_planes(ragged_coded.data(), ragged_coded.size(), ragged_back.data());
  CHECK(ragged_back == ragged);
}

TEST_CASE("relocation planes decode, sixteen words at a time, to the words for every length") {
  std::mt19937 random(45);
  for (uint64_t count = 0; count <= 100; ++count) {
    for (uint64_t ragged = 0; ragged < kRelocationWordSize; ragged += 3) {
      CAPTURE(count);
      CAPTURE(ragged);
      // Sorted lists as relocs writes them (small differences), with big jumps and wraps mixed in.
      std::vector<uint8_t> words;
      uint32_t w = 0x81000000;
      for (uint64_t i = 0; i < count; ++i) {
        w += random() % 5 == 0 ? static_cast<uint32_t>(random()) : random() % 64;
        test::append_le32(words, w);
      }
      for (uint64_t i = 0; i < ragged; ++i) words.push_back(static_cast<uint8_t>(random()));
      std::vector<uint8_t> coded(words.size()), decoded(words.size(), 0xcc);
      code_relocation_planes(words.data(), words.size(), coded.data());
      decode_relocation_planes(coded.data(), coded.size(), decoded.data());
      REQUIRE(decoded == words);
    }
  }
}

TEST_CASE("relocation table: malformed tables are errors") {
  RelocationTable t;
  auto message = [&](const std::vector<uint8_t>& bytes) {
    StubStatus s = parse_relocation_table(bytes.data(), bytes.size(), &t);
    return s.ok() ? std::string("ok") : std::string(s.message);
  };
  CHECK(message({}) == "relocation table does not start with a 0 word");
  CHECK(message({0, 0, 0, 0, 1}) == "relocation table size is not a multiple of 4");
  CHECK(message(table_of({5, 0, 0})) == "relocation table does not start with a 0 word");
  CHECK(message(table_of({0, 5, 6})) == "relocation table has neither two nor three 0 words");
  CHECK(message(table_of({0, 5, 0, 6, 0, 7, 0})) == "relocation table has more than three 0 words");
}

TEST_CASE("relocate_kernel: 64-bit, inverse and 32-bit places at the edges of segments") {
  Placed p;
  const LoadSegment& text = p.kernel.segments[0];  // 0x1000000, 0x23000 bytes
  const LoadSegment& data = p.kernel.segments[1];  // 0x1200000, 0x9000 bytes
  uint64_t first64 = text.paddr, last64 = text.paddr + text.filesz - 8;
  uint64_t inverse = data.paddr + 0x100, last32 = data.paddr + data.filesz - 4;
  uint64_t before64a = p.u64(first64), before64b = p.u64(last64);
  uint32_t before_inverse = p.u32(inverse), before32 = p.u32(last32);

  std::vector<uint8_t> bytes = table_of({0, va(first64), va(last64), 0, va(inverse), 0, va(last32)});
  RelocationTable t;
  REQUIRE(relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, kDelta, *p.memory, &t).ok());
  CHECK(p.u64(first64) == before64a + kDelta);
  CHECK(p.u64(last64) == before64b + kDelta);
  CHECK(p.u32(inverse) == static_cast<uint32_t>(before_inverse - kDelta));
  CHECK(p.u32(last32) == static_cast<uint32_t>(before32 + kDelta));
  // Nothing else changed, and only the segments were asked for.
  CHECK(p.memory->stray_writes({}).empty());
  for (Range g : p.memory->granted()) CHECK(range_of(p.base, p.kernel.span()).contains(g));
}

TEST_CASE("relocate_kernel: the per-CPU segment is reached through its load address") {
  Placed p;
  const LoadSegment& percpu = p.kernel.segments[2];  // vaddr 0, paddr 0x1209000
  REQUIRE(percpu.vaddr == 0);
  uint64_t place = percpu.paddr + 0x10;
  uint64_t before = p.u64(place);
  std::vector<uint8_t> bytes = table_of({0, va(place), 0, 0});
  RelocationTable t;
  REQUIRE(relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, kDelta, *p.memory, &t).ok());
  CHECK(p.u64(place) == before + kDelta);
}

TEST_CASE("relocate_kernel: an unsorted list is checked just as well") {
  Placed p;
  const LoadSegment& text = p.kernel.segments[0];
  const LoadSegment& data = p.kernel.segments[1];
  uint64_t a = data.paddr + 8, b = text.paddr + 16;  // descending, across segments
  uint64_t before_a = p.u64(a), before_b = p.u64(b);
  std::vector<uint8_t> bytes = table_of({0, va(a), va(b), 0});
  RelocationTable t;
  REQUIRE(relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, kDelta, *p.memory, &t).ok());
  CHECK(p.u64(a) == before_a + kDelta);
  CHECK(p.u64(b) == before_b + kDelta);
  std::vector<uint8_t> bad = table_of({0, va(a), va(0x1100000), va(b), 0});  // the middle one is in a gap
  StubStatus s = relocate_kernel(bad.data(), bad.size(), p.kernel, p.base, kDelta, *p.memory, &t);
  REQUIRE_FALSE(s.ok());
  CHECK(p.u64(a) == before_a + kDelta);  // unchanged by the refused table
}

TEST_CASE("relocate_kernel: a target outside the file-backed kernel stops it before any write") {
  const LoadSegment last = [] {
    Placed p;
    return p.kernel.segments[3];  // 0x120B000, filesz 0x6000, memsz 0x9000
  }();
  for (uint64_t bad : {last.paddr + last.filesz - 4,  // a 64-bit place straddling the end of the file bytes
                       last.paddr + last.filesz,      // in bss
                       uint64_t{0x1100000},           // between segments
                       uint64_t{0xF00000}}) {         // below the kernel
    CAPTURE(bad);
    Placed p;
    uint64_t good = p.kernel.segments[0].paddr;
    uint64_t before = p.u64(good);
    std::vector<uint8_t> bytes = table_of({0, va(good), va(bad), 0, 0});
    RelocationTable t;
    StubStatus s = relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, kDelta, *p.memory, &t);
    REQUIRE_FALSE(s.ok());
    CHECK(std::string(s.message) == "relocation target outside the kernel");
    CHECK(p.u64(good) == before);  // the valid entry before it was not applied either
  }
}

TEST_CASE("relocate_kernel: a bad entry in the last list reverts the lists already patched") {
  Placed p;
  uint64_t a = p.kernel.segments[0].paddr + 0x40, b = p.kernel.segments[1].paddr + 0x80;
  uint64_t before_a = p.u64(a), before_b = p.u64(b);
  // 64-bit list {a}, inverse list {b, outside}, 32-bit list {a + 8}: the inverse list goes last.
  for (uint32_t bad : {va(0xF00000), 0u}) {
    CAPTURE(bad);
    std::vector<uint8_t> bytes = table_of({0, va(a), 0, va(b), bad, 0, va(a + 8)});
    RelocationTable t;
    StubStatus s = relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, kDelta, *p.memory, &t);
    REQUIRE_FALSE(s.ok());
    CHECK(std::string(s.message) ==
          (bad ? "relocation target outside the kernel" : "relocation table has more than three 0 words"));
    CHECK(p.u64(a) == before_a);
    CHECK(p.u64(b) == before_b);
    CHECK(p.u64(a + 8) == p.u64(a + 8));
  }
  uint64_t before_a8 = p.u64(a + 8);
  std::vector<uint8_t> good = table_of({0, va(a), 0, va(b), 0, va(a + 8)});
  RelocationTable t;
  REQUIRE(relocate_kernel(good.data(), good.size(), p.kernel, p.base, kDelta, *p.memory, &t).ok());
  CHECK(t.format == RelocationFormat::kWithInverse32);
  CHECK(t.count64() == 1);
  CHECK(t.count_inverse32() == 1);
  CHECK(t.count32() == 1);
  CHECK(p.u64(a) == before_a + kDelta);
  CHECK(load_le<uint32_t>(p.memory->at(p.at(b))) == static_cast<uint32_t>(before_b - kDelta));
  CHECK(load_le<uint32_t>(p.memory->at(p.at(a + 8))) == static_cast<uint32_t>(before_a8 + kDelta));
}

TEST_CASE("relocate_kernel: a zero offset or empty lists write nothing") {
  Placed p;
  std::vector<uint8_t> bytes = table_of({0, va(p.kernel.segments[0].paddr), 0, 0});
  RelocationTable t;
  REQUIRE(relocate_kernel(bytes.data(), bytes.size(), p.kernel, p.base, 0, *p.memory, &t).ok());
  CHECK(p.memory->granted().empty());
  std::vector<uint8_t> empty = table_of({0, 0});
  uint64_t before = p.u64(p.kernel.segments[0].paddr);
  REQUIRE(relocate_kernel(empty.data(), empty.size(), p.kernel, p.base, kDelta, *p.memory, &t).ok());
  CHECK(p.u64(p.kernel.segments[0].paddr) == before);
}
