// KASLR in the engine: the command line's say, the uniform slot picker, the virtual offset, the
// entropy mixer, and whole runs that place and relocate a packed kernel in simulated memory.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "tests/support/bytes.h"
#include "packer/input/bzimage_reader.h"
#include "packer/read/info.h"
#include "stub/unpack/kaslr.h"
#include "tests/support/packed_image.h"
#include "stub/unpack/relocation_table.h"
#include "tests/support/simulated_memory.h"
#include "stub/unpack/packer_record_unpack.h"

using namespace kpack;

namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

KaslrOptions options_of(const std::string& text) { return parse_kaslr_options(text.data(), text.size()); }

FreeMemory free_of(std::initializer_list<Range> ranges) {
  FreeMemory free;
  for (Range r : ranges) REQUIRE(free.add(r).ok());
  return free;
}

}  // namespace

TEST_CASE("kaslr options: nokaslr, mem=, memmap= and 1 GiB huge pages, as the stock decompressor reads them") {
  CHECK(options_of("console=ttyS0 nokaslr quiet").disabled);
  CHECK_FALSE(options_of("nokaslrx kaslr").disabled);
  CHECK(options_of("").memory_limit == kMaxPhysicalAddress);
  CHECK(options_of("mem=512M").memory_limit == 512 * kMiB);
  CHECK(options_of("mem=0x40000000 mem=2G").memory_limit == kGiB);  // the lowest wins
  CHECK(options_of("memmap=768M").memory_limit == 768 * kMiB);

  KaslrOptions o = options_of("memmap=64M$0x10000000,16M#2G memmap=1M!0x3000000 memmap=2G@4G memmap=exactmap");
  CHECK(o.kaslr_memmap_count == 3);
  REQUIRE(o.memory.reserved_count == 3);
  CHECK(o.memory.reserved[0].begin == 0x10000000);
  CHECK(o.memory.reserved[0].size() == 64 * kMiB);
  CHECK(o.memory.reserved[1].begin == 2 * kGiB);
  CHECK(o.memory.reserved[1].size() == 16 * kMiB);
  CHECK(o.memory.reserved[2].begin == 0x3000000);
  CHECK(o.memory.reserved[2].size() == kMiB);
  CHECK(o.memory_limit == kMaxPhysicalAddress);  // nn@ss is usable RAM, not a limit
  CHECK_FALSE(o.too_many_memmaps);
  CHECK(options_of("memmap=1M$1G,1M$2G,1M$3G,1M$4G,1M$5G").too_many_memmaps);

  CHECK(options_of("hugepagesz=1G hugepages=3").gigantic_pages == 3);
  CHECK(options_of("hugepagesz=2M hugepages=3").gigantic_pages == 0);
  CHECK(options_of("hugepages=3").gigantic_pages == 0);
}

TEST_CASE("slots: every 2 MiB-aligned fit at or above the floor and below the limit, counted and numbered") {
  // A 1-entry RAM map: 64 MiB from 1 MiB; a 10 MiB kernel from the 16 MiB floor.
  FreeMemory one = free_of({{kMiB, 65 * kMiB}});
  uint64_t n = count_slots(one, 10 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress);
  CHECK(n == (65 * kMiB - 10 * kMiB - 16 * kMiB) / (2 * kMiB) + 1);
  CHECK(slot_address(one, 10 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress, 0) == 16 * kMiB);
  CHECK(slot_address(one, 10 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress, n - 1) == 54 * kMiB);
  CHECK(count_slots(one, 10 * kMiB, 2 * kMiB, 16 * kMiB, 30 * kMiB) == 3);  // 16, 18, 20 MiB
  CHECK(count_slots(one, 64 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress) == 0);

  // Several ranges, one above 4 GiB: slots are numbered in address order across them.
  FreeMemory many = free_of({{17 * kMiB, 40 * kMiB}, {64 * kMiB, 66 * kMiB}, {4 * kGiB + kMiB, 4 * kGiB + 23 * kMiB}});
  uint64_t m = count_slots(many, 4 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress);
  CHECK(m == 10 + 0 + 9);  // 18..36 MiB; none in 64-66 MiB; 4 GiB + 2..18 MiB
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < m; ++i) {
    uint64_t a = slot_address(many, 4 * kMiB, 2 * kMiB, 16 * kMiB, kMaxPhysicalAddress, i);
    CHECK(a % (2 * kMiB) == 0);
    CHECK(many.contains(range_of(a, 4 * kMiB)));
    seen.insert(a);
  }
  CHECK(seen.size() == m);
  CHECK(*seen.rbegin() == 4 * kGiB + 18 * kMiB);
}

TEST_CASE("kaslr options take memmap= regions, RAM above mem= and 1 GiB pages out of the slots") {
  FreeMemory free = free_of({{kMiB, 3 * kGiB}, {4 * kGiB, 6 * kGiB}});
  KaslrOptions o = options_of("memmap=16M$0x4000000 mem=5G hugepagesz=1G hugepages=2");
  REQUIRE(apply_kaslr_options(o, free).ok());
  CHECK_FALSE(free.contains({0x4000000, 0x4000001}));
  CHECK(free.contains({kMiB, 0x4000000}));
  CHECK_FALSE(free.contains({5 * kGiB, 5 * kGiB + 1}));
  // The two lowest free aligned gigabytes: 1-2 GiB and 2-3 GiB.
  CHECK_FALSE(free.contains({kGiB, kGiB + 1}));
  CHECK_FALSE(free.contains({3 * kGiB - 1, 3 * kGiB}));
  CHECK(free.contains({0x4000000 + 16 * kMiB, kGiB}));
  CHECK(free.contains({4 * kGiB, 5 * kGiB}));
}

TEST_CASE("kaslr's slots keep off all the command line keeps from the kernel: nn%ss and exactmap's gaps too") {
  // Stricter than the stock decompressor, whose KASLR skips neither: the stub's own placement
  // (remove_reserved_memory) does, and KASLR draws from what is left.
  FreeMemory free = free_of({{kMiB, 2 * kGiB}});
  KaslrOptions o = options_of("memmap=16M%0x4000000-12+1 memmap=exactmap memmap=1G@1M");
  CHECK(o.kaslr_memmap_count == 0);
  REQUIRE(apply_kaslr_options(o, free).ok());
  CHECK_FALSE(free.contains({0x4000000, 0x4000001}));
  CHECK(free.contains({kMiB, 0x4000000}));
  CHECK(free.contains({0x5000000, kGiB + kMiB}));
  CHECK_FALSE(free.contains({kGiB + kMiB, kGiB + kMiB + 1}));
  // More ranges than the stub keeps: no slot is drawn from a set it could not clear.
  std::string many;
  for (int i = 0; i < 40; ++i) many += "memmap=4K$" + std::to_string(0x10000000 + i * 0x10000) + " ";
  FreeMemory other = free_of({{kMiB, 2 * kGiB}});
  CHECK_FALSE(apply_kaslr_options(options_of(many.c_str()), other).ok());
}

TEST_CASE("the virtual offset stays inside KERNEL_IMAGE_SIZE, in 2 MiB steps") {
  uint64_t slots = 0;
  uint64_t span = 48 * kMiB, link = 16 * kMiB;
  for (uint64_t random : {uint64_t{0}, uint64_t{1}, uint64_t{481}, ~uint64_t{0}, uint64_t{0x123456789}}) {
    uint64_t offset = random_virtual_offset(link, span, random, &slots);
    CHECK(slots == (kKernelImageSize - link - span) / (2 * kMiB) + 1);
    CHECK(offset % (2 * kMiB) == 0);
    CHECK(link + offset + span <= kKernelImageSize);
  }
  CHECK(random_virtual_offset(link, span, slots - 1, &slots) == kKernelImageSize - link - span);
  CHECK(random_virtual_offset(16 * kMiB, kGiB, 5, &slots) == 0);
  CHECK(slots == 0);
}

TEST_CASE("entropy mixing: every input bit changes the result") {
  uint8_t params[4096] = {};
  uint64_t base = mix_entropy(1, params, sizeof(params));
  params[4095] ^= 1;
  CHECK(mix_entropy(1, params, sizeof(params)) != base);
  CHECK(mix_entropy(base, 1) != mix_entropy(base, 2));
  CHECK(mix_entropy(1, params, 7) != mix_entropy(1, params, 8));  // the length counts too
}

namespace {

// A packed synthetic kernel carrying a relocation table, loaded at 1 MiB of a 160 MiB machine,
// then unpacked through the record as the stub does.
struct KaslrRun {
  KernelInput input = test::synthetic_input();
  std::unique_ptr<test::SimulatedMemory> memory = std::make_unique<test::SimulatedMemory>(0, 160 * kMiB);
  std::vector<uint8_t> protected_part;
  StubStatus status;
  UnpackResult result;

  uint64_t text() const { return input.kernel.segments[0].paddr; }
  uint64_t data() const { return input.kernel.segments[1].paddr; }

  uint64_t load = kMiB;  // where the protected-mode part lies

  // Loaded at 1 MiB (QEMU -kernel), or at the header's pref_address (GRUB).
  KaslrRun(Codec codec, const KaslrRequest& kaslr, bool randomize_raw = false, bool at_pref_address = false,
           RawLayout layout = RawLayout::kInPlace, uint64_t reachable_below = ~0ull) {
    memory->set_reachable_below(reachable_below);
    // 64-bit list {text+0x100, data+0x10}, inverse {data+0x20}, 32-bit {text+0x200}.
    auto va = [](uint64_t paddr) { return relocation_entry(paddr + kStartKernelMap); };
    for (uint32_t w : {0u, va(text() + 0x100), va(data() + 0x10), 0u, va(data() + 0x20), 0u, va(text() + 0x200)})
      test::append_le32(input.relocation_table, w);
    PackOptions options;
    options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
    options.randomize_raw_physically = randomize_raw;
    options.raw_layout = layout;
    Result<std::vector<uint8_t>> file =
        build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
    REQUIRE(file.ok());
    Result<BzImage> image = read_bzimage({*file, "out.img"});
    REQUIRE(image.ok());
    protected_part.assign(file->begin() + static_cast<long>(image->setup_size), file->end());
    if (at_pref_address) load = image->header.pref_address;
    memory->load(load, protected_part);
    FreeMemory free;
    REQUIRE(free.add({kMiB, 160 * kMiB}).ok());
    NoTrace trace;
    status = unpack_from_packer_record(*image->packer_record, load, kaslr, free, *memory, trace, &result);
  }

  uint64_t u64_at(uint64_t paddr) { return load_le<uint64_t>(memory->at(result.base + paddr - text())); }
  uint32_t u32_at(uint64_t paddr) { return load_le<uint32_t>(memory->at(result.base + paddr - text())); }
  uint64_t original_u64(uint64_t paddr) { return load_le<uint64_t>(elf_at(paddr)); }
  uint32_t original_u32(uint64_t paddr) { return load_le<uint32_t>(elf_at(paddr)); }
  const uint8_t* elf_at(uint64_t paddr) {
    for (uint32_t i = 0; i < input.kernel.segment_count; ++i) {
      const LoadSegment& s = input.kernel.segments[i];
      if (paddr >= s.paddr && paddr < s.paddr + s.filesz) return input.elf.data() + s.offset + (paddr - s.paddr);
    }
    FAIL("not in a segment");
    return nullptr;
  }
};

KaslrRequest kaslr_with(uint64_t physical, uint64_t virtual_random) {
  KaslrRequest k;
  k.physical = k.virtual_base = true;
  k.physical_random = physical;
  k.virtual_random = virtual_random;
  return k;
}

}  // namespace

TEST_CASE("a KASLR run: a random slot above the floor, the table applied, nothing else touched") {
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kRaw}) {
    CAPTURE(codec_name(codec));
    std::set<uint64_t> bases, offsets;
    for (uint64_t draw : {1u, 7u, 20u, 33u}) {
      KaslrRun run(codec, kaslr_with(draw * 0x9e3779b97f4a7c15ull, draw * 0xbf58476d1ce4e5b9ull), true);
      REQUIRE_MESSAGE(run.status.ok(), run.status.message);
      const UnpackResult& r = run.result;
      CHECK(r.base >= run.input.kernel.physical.begin);  // the 16 MiB floor
      CHECK(r.base % (2 * kMiB) == 0);
      CHECK(r.physical_slots > 1);
      CHECK(r.virtual_slots == (kKernelImageSize - 16 * kMiB - run.input.kernel.span()) / (2 * kMiB) + 1);
      CHECK(r.relocations == (r.virtual_offset ? 4 : 0));
      CHECK(run.u64_at(run.text() + 0x100) == run.original_u64(run.text() + 0x100) + r.virtual_offset);
      CHECK(run.u64_at(run.data() + 0x10) == run.original_u64(run.data() + 0x10) + r.virtual_offset);
      CHECK(run.u32_at(run.data() + 0x20) ==
            static_cast<uint32_t>(run.original_u32(run.data() + 0x20) - r.virtual_offset));
      CHECK(run.u32_at(run.text() + 0x200) ==
            static_cast<uint32_t>(run.original_u32(run.text() + 0x200) + r.virtual_offset));
      CHECK(run.memory->violations().empty());
      CHECK(run.memory->stray_writes({run.protected_part}).empty());
      bases.insert(r.base);
      offsets.insert(r.virtual_offset);
    }
    CHECK(bases.size() >= 3);
    CHECK(offsets.size() >= 3);
  }
}

TEST_CASE("raw images at pref_address stay in place unless packed with --randomize-physical; nokaslr moves nothing") {
  KaslrRun in_place(Codec::kRaw, kaslr_with(12345, 678), false, true);
  REQUIRE(in_place.status.ok());
  CHECK(in_place.result.in_place);
  CHECK(in_place.result.base == in_place.input.kernel.physical.begin);
  CHECK(in_place.result.physical_slots == 0);
  CHECK(in_place.result.virtual_offset != 0);

  KaslrRun moved(Codec::kRaw, kaslr_with(12345, 678), true, true);
  REQUIRE(moved.status.ok());
  CHECK_FALSE(moved.result.in_place);
  CHECK(moved.result.moved > 0);

  for (Codec codec : {Codec::kLz4, Codec::kRaw}) {
    KaslrRun off(codec, KaslrRequest{});
    REQUIRE(off.status.ok());
    CHECK(off.result.base == off.input.kernel.physical.begin);
    CHECK(off.result.virtual_offset == 0);
    CHECK(off.u64_at(off.text() + 0x100) == off.original_u64(off.text() + 0x100));
  }
}

TEST_CASE(
    "a compact raw kernel at pref_address applies its relocation table after the segments move up over it, then "
    "zeroes the bss") {
  KaslrRun run(Codec::kRaw, kaslr_with(12345, 678), false, true, RawLayout::kCompact);
  REQUIRE(run.status.ok());
  REQUIRE(run.result.in_place);
  const LoadSegment& last = run.input.kernel.segments[3];
  // The file holds the table right after the last segment's 0x6000 file bytes; the segments after
  // the first move up by the 0x1DD000 bytes between the first and the second in memory, over it.
  CHECK(run.result.moved == 0x9000 + 0x2000 + 0x6000);
  const uint64_t table_at = last.paddr + 0x6000;
  const UnpackResult& r = run.result;
  CHECK(r.relocations == 4);
  CHECK(run.u64_at(run.text() + 0x100) == run.original_u64(run.text() + 0x100) + r.virtual_offset);
  CHECK(run.u32_at(run.data() + 0x20) == static_cast<uint32_t>(run.original_u32(run.data() + 0x20) - r.virtual_offset));
  CHECK(run.memory->copy(table_at, last.memsz - 0x6000) == std::vector<uint8_t>(last.memsz - 0x6000, 0));
}

TEST_CASE("no slot within mem= falls back to the lowest fit, and says so") {
  KaslrRequest k = kaslr_with(5, 6);
  k.options = options_of("mem=17M");  // the 16 MiB floor plus a 2.1 MiB kernel does not fit
  KaslrRun run(Codec::kZstd, k);
  REQUIRE(run.status.ok());
  CHECK(run.result.physical_fallback);
  CHECK(run.result.physical_slots == 0);
  CHECK(run.result.base == run.input.kernel.physical.begin);
}

TEST_CASE("KASLR draws only slots the stub can still map: below what memory says it reaches") {
  // The 160 MiB machine's slots run to its end; with the page-table pool said to reach only 40 MiB
  // (in the stub: no 1 GiB windows left above 4 GiB), every draw stays below, none halts.
  std::set<uint64_t> above;
  for (uint64_t draw = 1; draw <= 24; ++draw) {
    KaslrRun free_run(Codec::kLz4, kaslr_with(draw * 0x9e3779b97f4a7c15ull, draw));
    REQUIRE(free_run.status.ok());
    if (free_run.result.base + free_run.input.kernel.span() > 40 * kMiB) above.insert(free_run.result.base);
    KaslrRun run(Codec::kLz4, kaslr_with(draw * 0x9e3779b97f4a7c15ull, draw), false, false, RawLayout::kInPlace,
                 40 * kMiB);
    REQUIRE(run.status.ok());
    CHECK(run.result.base + run.input.kernel.span() <= 40 * kMiB);
    CHECK(run.result.physical_slots > 1);
    CHECK_FALSE(run.result.physical_fallback);
  }
  CHECK_FALSE(above.empty());  // unbounded, some draws land above 40 MiB
}

TEST_CASE("kpack info says what an image randomizes") {
  auto info_of = [](Codec codec, bool relocs, bool randomize_raw) {
    KernelInput input = test::synthetic_input();
    if (relocs)
      for (uint32_t w : {0u, 0u}) test::append_le32(input.relocation_table, w);
    PackOptions options;
    options.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
    options.randomize_raw_physically = randomize_raw;
    Result<std::vector<uint8_t>> image =
        build_image(Context{.output = "out.img"}, input, options, built_in_blobs(options.compress.codec));
    REQUIRE(image.ok());
    return test::printed_by([&](std::FILE* out) { REQUIRE(print_image_info({*image, "out.img"}, out).ok()); });
  };
  std::string lz4 = info_of(Codec::kLz4, true, false);
  CHECK(lz4.find("kpack: codec lz4, kernel runs at or above 0x1000000 (its link address)") != std::string::npos);
  CHECK(lz4.find("kaslr: physical yes (a random 2 MiB slot at or above the floor), virtual yes") != std::string::npos);
  CHECK(info_of(Codec::kZstd, false, false).find("virtual no (no relocation table)") != std::string::npos);
  CHECK(info_of(Codec::kRaw, true, false)
            .find("kaslr: physical no (raw: left where loaded when aligned at or above the floor") !=
        std::string::npos);
  CHECK(info_of(Codec::kRaw, true, true).find("kaslr: physical yes") != std::string::npos);
  // And how its frames are proved: the synthetic kernel's headers, 4 segments and the table.
  CHECK(lz4.find("frames: 6 independent, each proved by XXH3-64 in the frame table") != std::string::npos);
  CHECK(info_of(Codec::kGzip, false, false).find("frames: 5 independent, each proved by the format's own check") !=
        std::string::npos);
  CHECK(info_of(Codec::kRaw, true, false).find("frames:") == std::string::npos);
}
