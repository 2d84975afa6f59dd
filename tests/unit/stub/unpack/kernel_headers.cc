#include <doctest/doctest.h>

#include <cstring>

#include "stub/unpack/kernel_headers.h"
#include "tests/support/kernel_header_fixture.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

// GCC 12 loses track of the vector's size after copying `good` and reports the 4-byte field
// stores below as writes into a region of size 0 (-Wstringop-overflow); they are in bounds.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
using kpack::test::make_kernel_elf;
using kpack::test::typical_segments;

namespace {

StubStatus parse(const std::vector<uint8_t>& elf, KernelHeaders* kernel) {
  return parse_kernel_headers(elf.data(), elf.size(), elf.size(), kernel);
}

elf::Phdr* phdr(std::vector<uint8_t>& elf, int i) {
  return reinterpret_cast<elf::Phdr*>(elf.data() + sizeof(elf::Ehdr) + i * sizeof(elf::Phdr));
}
elf::Ehdr* ehdr(std::vector<uint8_t>& elf) { return reinterpret_cast<elf::Ehdr*>(elf.data()); }

}  // namespace

TEST_CASE("parse_kernel_headers reads the segments of a typical kernel") {
  std::vector<uint8_t> elf = make_kernel_elf(typical_segments());
  KernelHeaders k;
  REQUIRE(parse(elf, &k).ok());
  CHECK(k.segment_count == 4);
  CHECK(k.segments[0].paddr == 0x1000000);
  CHECK(k.segments[0].offset == 0x1000);
  CHECK(k.segments[2].vaddr == 0);
  CHECK(k.segments[3].memsz == 0x9000);
  CHECK(k.physical.begin == 0x1000000);
  CHECK(k.physical.end == 0x120B000 + 0x9000);
  CHECK(k.entry == 0x1000000);
  CHECK(k.alignment == 0x200000);
  CHECK(k.headers_end == 64 + 5 * 56);
  CHECK(k.file_end == k.segments[3].offset + 0x6000);
  CHECK_FALSE(is_physically_mirrored(k));
}

// Since 6.18 startup_64 is in .init.text, which the linker puts in the RW segment: the stock
// decompressor jumps to e_entry whatever p_flags say, and so must kpack.
TEST_CASE("parse_kernel_headers takes an entry in a writable, non-executable segment") {
  std::vector<uint8_t> elf = make_kernel_elf(typical_segments());
  ehdr(elf)->entry = 0x1200000 + 0x40;
  KernelHeaders k;
  REQUIRE(parse(elf, &k).ok());
  CHECK(k.entry == 0x1200040);
}

TEST_CASE("parse_kernel_headers sorts segments by file offset") {
  std::vector<uint8_t> elf = make_kernel_elf(typical_segments());
  elf::Phdr first = *phdr(elf, 0);
  *phdr(elf, 0) = *phdr(elf, 1);
  *phdr(elf, 1) = first;
  KernelHeaders k;
  REQUIRE(parse(elf, &k).ok());
  CHECK(k.segments[0].paddr == 0x1000000);
  CHECK(k.segments[1].paddr == 0x1200000);
}

TEST_CASE("parse_kernel_headers rejects each malformed input with its own message") {
  auto expect = [](std::vector<uint8_t> elf, const char* message) {
    KernelHeaders k;
    StubStatus status = parse(elf, &k);
    REQUIRE_FALSE(status.ok());
    CHECK(std::string(status.message) == message);
  };
  const std::vector<uint8_t> good = make_kernel_elf(typical_segments());
  expect({}, "truncated ELF header");
  expect(std::vector<uint8_t>(good.begin(), good.begin() + 63), "truncated ELF header");
  {
    auto e = good;
    e[0] = 0;
    expect(e, "not an ELF file");
  }
  {
    auto e = good;
    e[4] = 1;
    expect(e, "not a 64-bit ELF (ELFCLASS)");
  }
  {
    auto e = good;
    e[5] = 2;
    expect(e, "not a little-endian ELF");
  }
  {
    auto e = good;
    ehdr(e)->machine = 3;
    expect(e, "not an x86-64 ELF (e_machine)");
  }
  {
    auto e = good;
    ehdr(e)->type = 3;
    expect(e, "not an executable ELF (e_type)");
  }
  {
    auto e = good;
    ehdr(e)->phnum = 0;
    expect(e, "bad e_phnum");
  }
  {
    auto e = good;
    ehdr(e)->phnum = 65535;
    expect(e, "bad e_phnum");
  }
  {
    auto e = good;
    ehdr(e)->phentsize = 32;
    expect(e, "bad e_phentsize");
  }
  {
    auto e = good;
    ehdr(e)->phoff = e.size() - 8;
    expect(e, "program headers outside the ELF headers");
  }
  {
    auto e = good;
    phdr(e, 0)->filesz = uint64_t{phdr(e, 0)->memsz} + 1;
    expect(e, "segment's p_filesz exceeds p_memsz");
  }
  {
    auto e = good;
    phdr(e, 3)->offset = e.size() - 16;
    expect(e, "segment extends past the end of the file");
  }
  {
    auto e = good;
    phdr(e, 0)->paddr = 0x80000;
    expect(e, "segment below 1 MiB");
  }
  {
    auto e = good;
    phdr(e, 1)->paddr = 0xFFFFF000;
    expect(e, "segment above 4 GiB");
  }
  {
    auto e = good;
    phdr(e, 1)->paddr = ~0ull - 0x1000;
    expect(e, "segment's physical range wraps around");
  }
  {
    auto e = good;
    phdr(e, 1)->offset = phdr(e, 0)->offset;
    expect(e, "segments overlap in the file");
  }
  {
    auto e = good;
    phdr(e, 1)->paddr = 0x1010000;
    expect(e, "segments overlap in memory");
  }
  {
    auto e = good;
    ehdr(e)->entry = 0x5000000;
    expect(e, "e_entry must lie in a PT_LOAD segment's memory");
  }
  {
    auto e = good;  // just past the last segment's memory
    ehdr(e)->entry = 0x120B000 + 0x9000;
    expect(e, "e_entry must lie in a PT_LOAD segment's memory");
  }
  {
    auto e = good;
    for (int i = 0; i < 4; ++i) phdr(e, i)->type = 6;
    expect(e, "no PT_LOAD segment");
  }
  {
    auto e = good;
    phdr(e, 0)->offset = 0x100;
    expect(e, "first segment overlaps the ELF headers");
  }
}

TEST_CASE("parse_kernel_headers bounds segments by the stream size it is given") {
  std::vector<uint8_t> elf = make_kernel_elf(typical_segments());
  KernelHeaders k;
  // Only the headers are present, as in the stub: fine with an unknown stream length...
  CHECK(parse_kernel_headers(elf.data(), 0x1000, ~0ull, &k).ok());
  // ...but not when the stream is known to end before the segments.
  CHECK_FALSE(parse_kernel_headers(elf.data(), 0x1000, 0x1000, &k).ok());
}

namespace {

// The segment that holds the entry.
const LoadSegment& entry_segment(const KernelHeaders& k) {
  for (uint32_t i = 0; i < k.segment_count; ++i)
    if (k.entry >= k.segments[i].paddr && k.entry < k.segments[i].paddr + k.segments[i].memsz) return k.segments[i];
  FAIL("no segment holds the entry");
  return k.segments[0];
}

}  // namespace

// The rule 6.18 broke: 6.1's entry starts its R E text segment; 7.3's sits in .init.text, inside
// the RW data segment, which the stock decompressor enters all the same.
TEST_CASE("parse_kernel_headers reads Debian's 6.1 and 7.3 program headers, the entry wherever they put it") {
  std::vector<uint8_t> old_kernel = test::real_kernel_headers("6.1.0-57-cloud-amd64");
  KernelHeaders k;
  REQUIRE(parse_kernel_headers(old_kernel.data(), old_kernel.size(), 52431728, &k).ok());
  CHECK(k.segment_count == 4);
  CHECK(k.entry == 0x1000000);
  CHECK(entry_segment(k).flags == (elf::kPfR | elf::kPfX));
  CHECK(k.segments[2].vaddr == 0);  // the zero-based per-CPU segment, gone since 6.15
  CHECK(k.physical.begin == 0x1000000);
  CHECK(k.physical.end == 0x304E000 + 0xDB2000);

  std::vector<uint8_t> new_kernel = test::real_kernel_headers("7.3.4+deb13-cloud-amd64");
  REQUIRE(parse_kernel_headers(new_kernel.data(), new_kernel.size(), 60821176, &k).ok());
  CHECK(k.segment_count == 2);
  CHECK(k.entry == 0x38C0FA0);
  CHECK(&entry_segment(k) == &k.segments[1]);
  CHECK(entry_segment(k).flags == (elf::kPfR | elf::kPfW));
  CHECK(k.alignment == 0x200000);
  CHECK(k.physical.begin == 0x1000000);
  CHECK(k.physical.end == 0x3000000 + 0x1800000);
}
