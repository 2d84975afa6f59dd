#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "packer/read/stats.h"
#include "tests/support/temp_dir.h"

using namespace kpack;

namespace {

using test::TempDir;

void put(std::vector<uint8_t>& bytes, size_t offset, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

// A version 1 report written field by field at the offsets the format promises: an lz4 image
// entered at 32 bits, five phases, four CPUs.
std::vector<uint8_t> report_bytes() {
  std::vector<uint8_t> b(304, 0);
  std::memcpy(b.data(), "kpackRUN", 8);
  put(b, 8, 1, 4);
  put(b, 12, 304, 4);
  put(b, 16, 2, 4);
  put(b, 20, 1, 4);
  put(b, 24, 1500000000, 8);
  put(b, 32, 1536000000, 8);
  put(b, 40, 0x5a00000, 8);
  put(b, 48, 0x5a01000, 8);
  put(b, 56, 0x12000000, 8);
  put(b, 64, 3, 4);
  put(b, 68, 5, 4);
  const uint64_t phases[5][3] = {
      {0, 0, 3000000}, {1, 4096, 600000}, {2, 0x2e00000, 300000}, {5, 0x2d00000, 30000000}, {6, 71234, 1500000}};
  for (size_t i = 0; i < 5; ++i) {
    put(b, 72 + 24 * i, phases[i][0], 4);
    put(b, 72 + 24 * i + 8, phases[i][1], 8);
    put(b, 72 + 24 * i + 16, phases[i][2], 8);
  }
  const uint32_t counts[8] = {4, 3, 3, 3, 0, 57, 37, 0};
  for (size_t i = 0; i < 8; ++i) put(b, 264 + 4 * i, counts[i], 4);
  put(b, 296, 900000, 8);
  return b;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  Result<RunReport> run = parse_run_report({bytes, "sd/3/data"});
  return run ? "" : run.error().message;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("kpack stats prints a report's exact bytes as these lines") {
  Result<RunReport> run = parse_run_report({report_bytes(), "sd/3/data"});
  REQUIRE(run.ok());
  std::vector<std::string> lines =
      describe_run_report(*run, "setup_data/3", TscRate{3000000, "test"}, LoaderTimes{1234567, 89000});
  CHECK(lines == std::vector<std::string>{
                     "kpack run report: setup_data/3 (version 1)",
                     "entry: boot protocol 16/32-bit; codec: lz4",
                     "kernel: at 0x5a00000, entry 0x5a01000; KASLR: physical, virtual offset 0x12000000",
                     "tsc: 3000.000 MHz (test)",
                     "phase environment: 1.000 ms (3000000 cycles), 0 bytes",
                     "phase headers: 0.200 ms (600000 cycles), 4096 bytes",
                     "phase placed: 0.100 ms (300000 cycles), 48234496 bytes",
                     "phase segments: 10.000 ms (30000000 cycles), 47185920 bytes",
                     "phase relocated: 0.500 ms (1500000 cycles), 71234 relocations",
                     "stub: 12.000 ms (36000000 cycles) from entry to the kernel",
                     "stub entered: 500.000 ms (1500000000 cycles) after the TSC started",
                     "cpus: 4 found, 3 started, 3 ran, 3 returned, 0 late; the last joined the decode 0.300 ms (900000 "
                     "cycles) after it began",
                     "frames: 57, 37 by helpers, 0 redone",
                     "firmware: 1234.567 ms; loader: 89.000 ms (systemd-boot's LoaderTimeInitUSec, LoaderTimeExecUSec)",
                 });
}

TEST_CASE("kpack stats without a TSC rate or loader times prints cycles and no loader line") {
  std::vector<uint8_t> bytes = report_bytes();
  put(bytes, 20, 2, 4);   // the 64-bit entry
  put(bytes, 64, 4, 4);   // raw, in place
  put(bytes, 68, 1, 4);   // one phase
  put(bytes, 264, 1, 4);  // one CPU found
  Result<RunReport> run = parse_run_report({bytes, "d"});
  REQUIRE(run.ok());
  std::vector<std::string> lines = describe_run_report(*run, "setup_data/0", std::nullopt, std::nullopt);
  REQUIRE(lines.size() == 9);
  CHECK(lines[1] == "entry: boot protocol 64-bit; codec: lz4");
  CHECK(lines[2] == "kernel: at 0x5a00000, entry 0x5a01000; KASLR: none (raw, run where the loader put it)");
  CHECK(lines[3] == "tsc: rate unknown (no kernel log, no cpu MHz): cycles only");
  CHECK(lines[4] == "phase environment: 3000000 cycles, 0 bytes");
  CHECK(lines[5] == "stub: 36000000 cycles from entry to the kernel");
  CHECK(lines[7] ==
        "cpus: 1 found, 3 started, 3 ran, 3 returned, 0 late; the last joined the decode 900000 cycles after it began");
  CHECK(lines[8] == "frames: 57, 37 by helpers, 0 redone");
}

TEST_CASE("kpack stats refuses a report of another size or version, or no report at all") {
  std::vector<uint8_t> bytes = report_bytes();
  CHECK(error_of(bytes).empty());
  bytes.push_back(0);
  CHECK(error_of(bytes) == "sd/3/data: is 305 bytes; a version 1 run report is 304");
  bytes = report_bytes();
  put(bytes, 8, 2, 4);
  CHECK(error_of(bytes) == "sd/3/data: is a version 2 run report; this kpack reads version 1");
  bytes = report_bytes();
  bytes[5] = 'X';
  CHECK(error_of(bytes) == "sd/3/data: is not a kpack run report (no kpackRUN magic)");
  CHECK(error_of({1, 2, 3}) == "sd/3/data: is not a kpack run report (no kpackRUN magic)");
  bytes = report_bytes();
  put(bytes, 68, 9, 4);
  CHECK(error_of(bytes) == "sd/3/data: has more phases than a run report holds");
  bytes = report_bytes();
  put(bytes, 72, 7, 4);
  CHECK(error_of(bytes) == "sd/3/data: has an unknown phase 7");
}

TEST_CASE("kpack stats --from finds the kpack node among the others") {
  TempDir dir;
  std::filesystem::create_directories(dir / "0");
  std::filesystem::create_directories(dir / "1");
  write_text(dir / "0/type", "0x9\n");
  dir.write("0/data", {1, 2, 3, 4});
  write_text(dir / "1/type", "0x6b70616b\n");
  dir.write("1/data", report_bytes());
  std::string out_path = dir / "out.txt";
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  REQUIRE(out);
  Status status = print_stats(dir.path(), out);
  std::fclose(out);
  REQUIRE(status.ok());
  std::ifstream printed(out_path);
  std::string first, second;
  std::getline(printed, first);
  std::getline(printed, second);
  CHECK(first == "kpack run report: setup_data/1 (version 1)");
  CHECK(second == "entry: boot protocol 16/32-bit; codec: lz4");

  std::vector<uint8_t> truncated = report_bytes();
  truncated.resize(100);
  dir.write("1/data", truncated);
  status = print_stats(dir.path(), stdout);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == dir / "1/data: is 100 bytes; a version 1 run report is 304");

  write_text(dir / "1/type", "0x2\n");
  status = print_stats(dir.path(), stdout);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message ==
        dir.path() + ": has no kpack run report (no setup_data of type 0x6b70616b): not booted by a kpack image");
}

TEST_CASE("the TSC rate comes from the kernel's calibration, else cpu MHz") {
  std::string log =
      "6,120,0,-;tsc: Detected 2994.374 MHz processor\n"
      "6,560,1200000,-;tsc: Refined TSC clocksource calibration: 2994.372 MHz\n";
  std::optional<TscRate> rate = tsc_rate_from_kernel_log(log);
  REQUIRE(rate);
  CHECK(rate->khz == doctest::Approx(2994372));
  CHECK(rate->source == "dmesg: Refined TSC clocksource calibration");
  rate = tsc_rate_from_kernel_log("[    0.000000] tsc: Detected 1800.000 MHz processor\n");
  REQUIRE(rate);
  CHECK(rate->khz == doctest::Approx(1800000));
  CHECK(rate->source == "dmesg: tsc: Detected");
  CHECK_FALSE(tsc_rate_from_kernel_log("nothing about clocks\n"));

  rate = tsc_rate_from_cpuinfo("processor\t: 0\nmodel name\t: QEMU\ncpu MHz\t\t: 2400.125\ncache size\t: 512 KB\n");
  REQUIRE(rate);
  CHECK(rate->khz == doctest::Approx(2400125));
  CHECK(rate->source == "/proc/cpuinfo: cpu MHz");
  CHECK_FALSE(tsc_rate_from_cpuinfo("processor\t: 0\n"));
}

TEST_CASE("systemd-boot's loader times are decimal UTF-16 after 4 bytes of attributes") {
  std::vector<uint8_t> variable = {7, 0, 0, 0, '1', 0, '2', 0, '3', 0, '4', 0, 0, 0};
  CHECK(efi_microseconds(variable) == 1234);
  variable = {7, 0, 0, 0, '1', 0, 'x', 0, 0, 0};
  CHECK_FALSE(efi_microseconds(variable));
  variable = {7, 0, 0, 0, 0, 0};
  CHECK_FALSE(efi_microseconds(variable));
}
