// doc/stub-writes.md's table of what the stub places, held to the code: on a 64 MiB machine whose
// loader data and command-line reservations lie where each placement would go if it ignored them
// (a memmap= region at the top of RAM where the work area goes, setup_data and a memmap= region in
// the low pages the trampoline takes), every placed write lands off all of them. The table's placed
// rows must be exactly the ones checked here.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "packer/input/bzimage_reader.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/reserved_memory.h"
#include "stub/machine/trampoline_page.h"
#include "stub/options/stub_options.h"
#include "stub/unpack/packer_record_unpack.h"
#include "stub/unpack/run_report.h"
#include "tests/support/packed_image.h"
#include "tests/support/simulated_memory.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kRam = 64 * kMiB;
// boot_params low, as a 16-bit loader may put it: the 64 KiB around it are no trampoline's, so the
// node and the reservation near 0x9F000 are what the low pages must step around.
constexpr uint64_t kParams = 0x10000, kCommandLine = 0x91000, kLowNode = 0x9E000, kHighNode = 0x2000000;
constexpr uint64_t kImage = kMiB;
const char kLine[] = "console=ttyS0 memmap=1M$0x3e00000 memmap=8K$0x9C000 kpack.debug";

// The ids of doc/stub-writes.md's "Placed by the stub" rows.
std::set<std::string> documented_placements() {
  std::ifstream in(std::string(KPACK_SOURCE_DIR) + "/doc/stub-writes.md");
  REQUIRE(in);
  std::set<std::string> ids;
  bool placed = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) placed = line == "## Placed by the stub";
    if (placed && line.rfind("| `", 0) == 0) ids.insert(line.substr(3, line.find('`', 3) - 3));
  }
  return ids;
}

struct Machine {
  std::unique_ptr<test::SimulatedMemory> memory = std::make_unique<test::SimulatedMemory>(0, kRam);
  boot::BootParams params{};
  BootEnvironment env;
  StubOptions options;
  std::vector<Range> loader_data;  // and the command line's reservations: never written

  Machine() {
    const boot::E820Entry map[] = {{0, 0x9FC00, boot::kE820Ram},
                                   {0x9FC00, 0x400, boot::kE820Reserved},
                                   {0xF0000, 0x10000, boot::kE820Reserved},
                                   {kMiB, kRam - kMiB, boot::kE820Ram}};
    std::memcpy(params.e820_table, map, sizeof(map));
    params.e820_entries = 4;
    params.hdr.cmd_line_ptr = kCommandLine;
    params.hdr.cmdline_size = 2047;
    std::memcpy(memory->at(kCommandLine), kLine, sizeof(kLine));
    params.hdr.ramdisk_image = 0x3000000;
    params.hdr.ramdisk_size = 0x400000;
    // A node in the low pages (above boot_params' 64 KiB), then one at 32 MiB.
    boot::SetupData low{kHighNode, 1, 16}, high{0, 2, 64};
    std::memcpy(memory->at(kLowNode), &low, sizeof(low));
    std::memcpy(memory->at(kHighNode), &high, sizeof(high));
    params.hdr.setup_data = kLowNode;
    REQUIRE(read_boot_environment(params, kParams, *memory, &env).ok());
    options = parse_stub_options(kLine, std::strlen(kLine));
    REQUIRE(keep_command_line_memory(options.kaslr, env).ok());
    loader_data = {range_of(kParams, sizeof(params)),
                   range_of(kCommandLine, sizeof(kLine)),
                   range_of(0x3000000, 0x400000),
                   range_of(kLowNode, 16 + sizeof(boot::SetupData)),
                   range_of(kHighNode, 64 + sizeof(boot::SetupData)),
                   range_of(0x3E00000, kMiB),
                   range_of(0x9C000, 0x2000)};
    for (Range r : loader_data) memory->protect(r);
  }
  bool clear(Range r) const {
    for (Range l : loader_data)
      if (l.overlaps(r)) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("doc/stub-writes.md lists exactly the placements this test checks") {
  CHECK(documented_placements() ==
        std::set<std::string>{"kernel", "work-area", "run-report", "trampoline-page", "paging-switch"});
}

TEST_CASE("placed writes keep off loader data and command-line reservations: kernel, work-area, run-report") {
  for (Codec codec : {Codec::kLz4, Codec::kZstd, Codec::kRaw}) {
    for (bool randomize : {true, false}) {
      CAPTURE(codec_name(codec));
      CAPTURE(randomize);
      Machine m;
      KernelInput input = test::synthetic_input();
      PackOptions pack;
      pack.compress = {codec, codec == Codec::kRaw ? 0 : 1, 1};
      pack.raw_layout = RawLayout::kCompact;
      Result<std::vector<uint8_t>> file = build_image(Context{.output = "out.img"}, input, pack, built_in_blobs(codec));
      REQUIRE(file.ok());
      Result<BzImage> image = read_bzimage({*file, "out.img"});
      REQUIRE(image.ok());
      std::vector<uint8_t> part(file->begin() + static_cast<long>(image->setup_size), file->end());
      m.memory->load(kImage, part);
      KaslrRequest kaslr;
      kaslr.options = m.options.kaslr;
      kaslr.physical = kaslr.virtual_base = randomize;
      kaslr.physical_random = 0x9e3779b97f4a7c15ull;
      kaslr.virtual_random = 7;
      NoTrace trace;
      UnpackResult r;
      StubStatus status =
          unpack_from_packer_record(*image->packer_record, kImage, kaslr, m.env.free, *m.memory, trace, &r);
      REQUIRE_MESSAGE(status.ok(), status.message);
      // kernel, work-area: every write the engine asked for lies in one or the other.
      Range kernel = range_of(r.base, r.kernel.span());
      CHECK(m.memory->violations().empty());
      for (Range g : m.memory->granted()) CHECK((kernel.contains(g) || r.work.contains(g)));
      CHECK(m.clear(kernel));
      CHECK(m.clear(r.work));
      // run-report.
      uint64_t report = 0;
      REQUIRE(place_run_report(m.env.free, kernel, range_of(kImage, part.size()), &report));
      CHECK(m.clear(range_of(report, kRunReportNodeSize)));
      CHECK_FALSE(kernel.overlaps(range_of(report, kRunReportNodeSize)));
    }
  }
}

TEST_CASE("placed writes keep off loader data and command-line reservations: trampoline-page, paging-switch") {
  Machine m;
  Range image = range_of(kImage, 8 * kMiB);
  uint64_t page = 0, pages = 0;
  REQUIRE(find_trampoline_page(m.params, kParams, m.env, image, &page));
  CHECK(m.clear(range_of(page, kTrampolinePageSize)));
  REQUIRE(find_low_pages(m.params, kParams, m.env, image, kLevelSwitchSize, &pages));
  CHECK(m.clear(range_of(pages, kLevelSwitchSize)));
  // Both below the node and the reservation, which hold the highest low pages.
  CHECK(page == 0x9B000);
  CHECK(pages == 0x9A000);
}
