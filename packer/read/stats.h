// kpack stats: the run report the stub left in setup_data (formats/run_report.h), read back on the
// running system from /sys/kernel/boot_params/setup_data/N/{type,data} (or a copy of that
// directory) and printed in milliseconds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/run_report.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

inline constexpr char kSetupDataDirectory[] = "/sys/kernel/boot_params/setup_data";

// The TSC's rate and where it was read, for the milliseconds.
struct TscRate {
  double khz = 0;
  std::string source;  // e.g. "dmesg: Refined TSC clocksource calibration"
};

// The firmware's and the boot loader's time as systemd-boot reports them (LoaderTimeInitUSec,
// LoaderTimeExecUSec), in microseconds.
struct LoaderTimes {
  uint64_t firmware_us = 0;
  uint64_t loader_us = 0;
};

// The report in the bytes of a setup_data node's data file.
Result<RunReport> parse_run_report(const FileView& data);

// The kernel's TSC rate from its log: the refined calibration when there is one (the value the
// kernel runs with), else the first "tsc: Detected ... MHz processor".
std::optional<TscRate> tsc_rate_from_kernel_log(const std::string& log);
// /proc/cpuinfo's first "cpu MHz": the CPU's clock, which on CPUs with an invariant TSC is close to
// the TSC's but not guaranteed to be (a last resort).
std::optional<TscRate> tsc_rate_from_cpuinfo(const std::string& cpuinfo);

// An EFI variable's value as systemd-boot stores the loader times: 4 bytes of attributes, then a
// decimal number in UTF-16LE, NUL-terminated.
std::optional<uint64_t> efi_microseconds(std::span<const uint8_t> variable);

// The printed lines, without newlines; `rate` absent prints cycles only.
std::vector<std::string> describe_run_report(const RunReport& run, const std::string& node,
                                             const std::optional<TscRate>& rate,
                                             const std::optional<LoaderTimes>& loader);

// The whole of `kpack stats`: the report in `directory` (the running system's when empty).
Status print_stats(const std::string& directory, std::FILE* out);

}  // namespace kpack
