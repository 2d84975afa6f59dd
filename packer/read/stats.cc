#include "packer/read/stats.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "formats/kpack_image.h"
#include "packer/base/file_io.h"

namespace kpack {

namespace {

constexpr char kLoaderVendorGuid[] = "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";  // systemd-boot's variables
constexpr char kEfiVariables[] = "/sys/firmware/efi/efivars";

std::string format(const char* fmt, auto... args) {
  char text[256];
  std::snprintf(text, sizeof(text), fmt, args...);
  return text;
}

unsigned long long number(uint64_t value) { return value; }

// "1.234 ms (3702000 cycles)", or the cycles alone when the rate is unknown.
std::string duration(uint64_t cycles, const std::optional<TscRate>& rate) {
  if (!rate) return format("%llu cycles", number(cycles));
  return format("%.3f ms (%llu cycles)", static_cast<double>(cycles) / rate->khz, number(cycles));
}

// The number after `label` in `text`, up to the end of its line.
std::optional<double> number_after(const std::string& text, const std::string& label) {
  size_t at = text.find(label);
  if (at == std::string::npos) return std::nullopt;
  const char* start = text.c_str() + at + label.size();
  char* end = nullptr;
  double value = std::strtod(start, &end);
  if (end == start || !(value > 0)) return std::nullopt;
  return value;
}

std::string kaslr_text(const RunReport& run) {
  uint32_t flags = run.flags;
  if (flags & kRunInPlace) return "none (raw, run where the loader put it)";
  std::string text;
  if (flags & kRunKaslrPhysical) text = "physical";
  if (flags & kRunKaslrVirtual)
    text += (text.empty() ? "" : ", ") + format("virtual offset %#llx", number(run.virtual_offset));
  return text.empty() ? "none" : text;
}

// Every byte of the kernel's log still in its buffer, through /dev/kmsg (one record per read).
std::string read_kernel_log() {
  std::string log;
  int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return log;
  char record[8192];
  for (;;) {
    ssize_t n = read(fd, record, sizeof(record));
    if (n > 0) {
      log.append(record, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EPIPE) continue;  // a record overwritten while we read: the next one follows
    break;
  }
  close(fd);
  return log;
}

std::string read_text(const std::string& path) {
  Result<std::vector<uint8_t>> bytes = read_file(path);
  return bytes ? std::string(bytes->begin(), bytes->end()) : std::string();
}

// The kernel's log first (what it calibrated), /proc/cpuinfo when the log is not readable
// (dmesg_restrict) or has rotated the lines away.
std::optional<TscRate> system_tsc_rate() {
  if (std::optional<TscRate> rate = tsc_rate_from_kernel_log(read_kernel_log())) return rate;
  return tsc_rate_from_cpuinfo(read_text("/proc/cpuinfo"));
}

std::optional<uint64_t> loader_variable(const char* name) {
  Result<std::vector<uint8_t>> bytes = read_file(std::string(kEfiVariables) + "/" + name + "-" + kLoaderVendorGuid);
  if (!bytes) return std::nullopt;
  return efi_microseconds(*bytes);
}

std::optional<LoaderTimes> system_loader_times() {
  std::optional<uint64_t> init = loader_variable("LoaderTimeInitUSec");
  std::optional<uint64_t> exec = loader_variable("LoaderTimeExecUSec");
  if (!init || !exec || *exec < *init) return std::nullopt;
  return LoaderTimes{*init, *exec - *init};
}

// The setup_data nodes' directories, in list order (their names are the indices).
Result<std::vector<std::string>> node_names(const std::string& directory) {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    std::string name = entry.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) names.push_back(name);
  }
  if (error) return error_in(directory, "cannot read: " + error.message());
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return std::stoull(a) < std::stoull(b); });
  return names;
}

// A node's type file unreadable (setup_data under /sys/kernel is root's) is an error, so that a
// user without root is not told that the system was not booted by kpack.
Result<bool> is_run_report_node(const std::string& node) {
  std::vector<uint8_t> bytes = KPACK_TRY_RESULT(read_file(node + "/type"));
  std::string type(bytes.begin(), bytes.end());
  return !type.empty() && std::strtoull(type.c_str(), nullptr, 0) == kSetupKpackRunReport;
}

}  // namespace

Result<RunReport> parse_run_report(const FileView& file) {
  std::span<const uint8_t> data = file.bytes;
  if (data.size() < offsetof(RunReport, codec) || std::memcmp(data.data(), kRunReportMagic, sizeof(kRunReportMagic)))
    return file.error("is not a kpack run report (no kpackRUN magic)");
  uint32_t version = load_le<uint32_t>(data.data() + offsetof(RunReport, version));
  if (version != kRunReportVersion)
    return file.error(format("is a version %u run report; this kpack reads version %u", version, kRunReportVersion));
  if (data.size() != sizeof(RunReport) ||
      load_le<uint32_t>(data.data() + offsetof(RunReport, size)) != sizeof(RunReport))
    return file.error(
        format("is %zu bytes; a version %u run report is %zu", data.size(), kRunReportVersion, sizeof(RunReport)));
  RunReport run;
  std::memcpy(static_cast<void*>(&run), data.data(), sizeof(run));
  if (run.phase_count > kRunReportMaxPhases) return file.error("has more phases than a run report holds");
  for (uint32_t i = 0; i < run.phase_count; ++i)
    if (run.phases[i].id >= kRunPhaseKinds)
      return file.error(format("has an unknown phase %u", uint32_t{run.phases[i].id}));
  return run;
}

std::optional<TscRate> tsc_rate_from_kernel_log(const std::string& log) {
  if (std::optional<double> mhz = number_after(log, "Refined TSC clocksource calibration: "))
    return TscRate{*mhz * 1000, "dmesg: Refined TSC clocksource calibration"};
  if (std::optional<double> mhz = number_after(log, "tsc: Detected "))
    return TscRate{*mhz * 1000, "dmesg: tsc: Detected"};
  return std::nullopt;
}

std::optional<TscRate> tsc_rate_from_cpuinfo(const std::string& cpuinfo) {
  size_t line = cpuinfo.find("cpu MHz");
  if (line == std::string::npos) return std::nullopt;
  size_t colon = cpuinfo.find(':', line);
  if (colon == std::string::npos) return std::nullopt;
  std::optional<double> mhz = number_after(cpuinfo.substr(colon), ":");
  if (!mhz) return std::nullopt;
  return TscRate{*mhz * 1000, "/proc/cpuinfo: cpu MHz"};
}

std::optional<uint64_t> efi_microseconds(std::span<const uint8_t> variable) {
  uint64_t value = 0;
  size_t digits = 0;
  for (size_t at = 4; at + 1 < variable.size(); at += 2) {
    uint16_t unit = static_cast<uint16_t>(variable[at] | variable[at + 1] << 8);
    if (unit == 0) break;
    if (unit < '0' || unit > '9' || ++digits > 19) return std::nullopt;
    value = value * 10 + (unit - '0');
  }
  if (!digits) return std::nullopt;
  return value;
}

std::vector<std::string> describe_run_report(const RunReport& run, const std::string& node,
                                             const std::optional<TscRate>& rate,
                                             const std::optional<LoaderTimes>& loader) {
  std::vector<std::string> lines;
  lines.push_back("kpack run report: " + node + " (version " + std::to_string(uint32_t{run.version}) + ")");
  lines.push_back(format("entry: %s; codec: %s", run_entry_name(static_cast<RunEntry>(uint32_t{run.entry})),
                         codec_name(static_cast<Codec>(uint32_t{run.codec}))));
  lines.push_back(format("kernel: at %#llx, entry %#llx; KASLR: %s", number(run.kernel_base), number(run.kernel_entry),
                         kaslr_text(run).c_str()));
  lines.push_back(rate ? format("tsc: %.3f MHz (%s)", rate->khz / 1000, rate->source.c_str())
                       : std::string("tsc: rate unknown (no kernel log, no cpu MHz): cycles only"));
  for (uint32_t i = 0; i < run.phase_count; ++i) {
    const RunPhase& phase = run.phases[i];
    const char* name = kRunPhaseNames[uint32_t{phase.id}];
    // The relocation phase counts entries where the others count bytes.
    const char* unit = std::strcmp(name, "relocated") == 0 ? "relocations" : "bytes";
    lines.push_back(
        format("phase %s: %s, %llu %s", name, duration(phase.cycles, rate).c_str(), number(phase.bytes), unit));
  }
  uint64_t start = run.start_tsc, end = run.kernel_entry_tsc;
  lines.push_back("stub: " + duration(end > start ? end - start : 0, rate) + " from entry to the kernel");
  lines.push_back("stub entered: " + duration(start, rate) + " after the TSC started");
  lines.push_back(format("cpus: %u found, %u started, %u ran, %u returned, %u late; ", uint32_t{run.cpus_found},
                         uint32_t{run.cpus_started}, uint32_t{run.cpus_ran}, uint32_t{run.cpus_returned},
                         uint32_t{run.cpus_late}) +
                  "the last joined the decode " + duration(run.helper_join_cycles, rate) + " after it began");
  lines.push_back(format("frames: %u, %u by helpers, %u redone", uint32_t{run.frames}, uint32_t{run.frames_by_helpers},
                         uint32_t{run.frames_redone}));
  if (loader)
    lines.push_back(format("firmware: %.3f ms; loader: %.3f ms (systemd-boot's LoaderTimeInitUSec, LoaderTimeExecUSec)",
                           loader->firmware_us / 1000.0, loader->loader_us / 1000.0));
  return lines;
}

Status print_stats(const std::string& directory, std::FILE* out) {
  bool this_system = directory.empty();
  std::string root = this_system ? kSetupDataDirectory : directory;
  // One message whether the directory is missing (the kernel makes it only when its loader passed
  // it setup_data, which a kpack stub always does) or holds no run report (setup_data from firmware
  // or another loader).
  const std::string not_kpack =
      format("this system was not booted by a kpack image: no kpack run report (type %#x) in %s", kSetupKpackRunReport,
             root.c_str());
  std::error_code error;
  if (this_system && !std::filesystem::exists(root, error) && !error) return Error{not_kpack};
  for (const std::string& name : KPACK_TRY_RESULT(node_names(root))) {
    std::string node = root + "/" + name;
    if (!KPACK_TRY_RESULT(is_run_report_node(node))) continue;
    std::vector<uint8_t> data = KPACK_TRY_RESULT(read_file(node + "/data"));
    RunReport run = KPACK_TRY_RESULT(parse_run_report({data, node + "/data"}));
    // The loader's times are this machine's: a copied directory may come from another one.
    std::optional<LoaderTimes> loader = this_system ? system_loader_times() : std::nullopt;
    for (const std::string& line : describe_run_report(run, "setup_data/" + name, system_tsc_rate(), loader))
      std::fprintf(out, "%s\n", line.c_str());
    return Ok{};
  }
  if (this_system) return Error{not_kpack};
  return error_in(root, format("has no kpack run report (no setup_data of type %#x): not booted by a kpack image",
                               kSetupKpackRunReport));
}

}  // namespace kpack
