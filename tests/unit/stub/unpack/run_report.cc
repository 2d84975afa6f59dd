#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "stub/unpack/run_report.h"

using namespace kpack;

TEST_CASE("the run report takes the phases kpack.debug names, in order, up to eight") {
  RunReport run = start_run_report(Codec::kZstd, RunEntry::kLegacy64, 123456789);
  CHECK(std::memcmp(run.magic, "kpackRUN", 8) == 0);
  CHECK(run.version == 1);
  CHECK(run.size == 304);
  CHECK(run.codec == 3);
  CHECK(run.entry == 2);
  CHECK(run.start_tsc == 123456789);

  report_phase(run, "environment", 0, 1000);
  report_phase(run, "headers", 4096, 2000);
  report_phase(run, "not a phase", 1, 1);  // left out
  report_phase(run, "placed", 0x2e00000, 3000);
  report_phase(run, "segments", 0x2d00000, 4000);
  report_phase(run, "relocated", 71234, 5000);
  REQUIRE(run.phase_count == 5);
  CHECK(run.phases[0].id == 0);
  CHECK(run.phases[1].id == 1);
  CHECK(run.phases[1].bytes == 4096);
  CHECK(run.phases[1].cycles == 2000);
  CHECK(run.phases[2].id == 2);
  CHECK(run.phases[3].id == 5);
  CHECK(run.phases[4].id == 6);
  CHECK(run.phases[4].bytes == 71234);
  CHECK(run.phases[4].cycles == 5000);

  for (int i = 0; i < 5; ++i) report_phase(run, "raw moved", 1, 1);
  CHECK(run.phase_count == 8);
  CHECK(run.phases[7].id == 4);
}

TEST_CASE("the run report says where the kernel went and who decoded its frames") {
  RunReport run = start_run_report(Codec::kLz4, RunEntry::kEfiPe, 1);
  UnpackResult result;
  result.base = 0x5a00000;
  result.entry = 0x5a01000;
  result.virtual_offset = 0x12000000;
  result.physical_slots = 400;
  result.frames = 57;
  result.frames_by_caller = 20;
  result.redone = 2;
  report_result(run, result, HelperCounts{4, 3, 3, 2, 1, 98765, StubStatus::success()});
  CHECK(run.kernel_base == 0x5a00000);
  CHECK(run.kernel_entry == 0x5a01000);
  CHECK(run.virtual_offset == 0x12000000);
  CHECK(run.flags == (kRunKaslrPhysical | kRunKaslrVirtual));
  CHECK(run.cpus_found == 4);
  CHECK(run.cpus_started == 3);
  CHECK(run.cpus_ran == 3);
  CHECK(run.cpus_returned == 2);
  CHECK(run.cpus_late == 1);
  CHECK(run.helper_join_cycles == 98765);
  CHECK(run.frames == 57);
  CHECK(run.frames_by_helpers == 37);
  CHECK(run.frames_redone == 2);

  UnpackResult in_place;
  in_place.in_place = true;
  report_result(run, in_place, HelperCounts{1, 0, 0, 0, 0, 0, StubStatus::success()});
  CHECK(run.flags == kRunInPlace);
}

TEST_CASE("the run report's page is free memory above 1 MiB, off the kernel and the image") {
  FreeMemory free;
  REQUIRE(free.add({0x1000, 0x9f000}).ok());
  REQUIRE(free.add({0x100000, 0x8000000}).ok());
  uint64_t address = 0;
  REQUIRE(place_run_report(free, Range{0x1000000, 0x4000000}, Range{0x100000, 0x1000000}, &address));
  CHECK(address == 0x4000000);
  REQUIRE(place_run_report(free, Range{0x1000000, 0x4000000}, Range{0x100000, 0x200000}, &address));
  CHECK(address == 0x200000);

  FreeMemory low_only;
  REQUIRE(low_only.add({0x1000, 0x9f000}).ok());
  CHECK_FALSE(place_run_report(low_only, Range{}, Range{}, &address));
}

TEST_CASE("the run report's node heads the setup_data list, the loader's behind it") {
  boot::BootParams params{};
  params.hdr.setup_data = 0x7f000;
  RunReport run = start_run_report(Codec::kXz, RunEntry::kEfiHandover, 42);
  std::vector<uint8_t> node(kRunReportNodeSize + 8, 0xEE);
  RunReport* left = link_run_report(params, 0x4000000, node.data(), run);
  CHECK(params.hdr.setup_data == 0x4000000);
  CHECK(reinterpret_cast<uint8_t*>(left) == node.data() + 16);
  const std::vector<uint8_t> header = {0x00, 0xf0, 0x07, 0, 0, 0, 0, 0, 0x6b, 0x61, 0x70, 0x6b, 0x30, 0x01, 0, 0};
  CHECK(std::vector<uint8_t>(node.begin(), node.begin() + 16) == header);
  CHECK(std::memcmp(node.data() + 16, &run, sizeof(run)) == 0);
  CHECK(node[kRunReportNodeSize] == 0xEE);  // nothing past the node
}
