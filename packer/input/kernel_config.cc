#include "packer/input/kernel_config.h"

#include <algorithm>
#include <charconv>

#include "packer/codecs/codecs.h"

namespace kpack {

namespace {

// The value of `name` in a configuration: "y", "5", ...; "n" for "# NAME is not set"; nothing
// when the configuration does not mention it.
std::optional<std::string> config_value(std::string_view config, std::string_view name) {
  const std::string set = "\n" + std::string(name) + "=", unset = "\n# " + std::string(name) + " is not set";
  const std::string text = "\n" + std::string(config);
  if (size_t at = text.find(set); at != std::string::npos) {
    size_t start = at + set.size();
    return text.substr(start, text.find('\n', start) - start);
  }
  if (text.find(unset + "\n") != std::string::npos || text.ends_with(unset)) return "n";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> embedded_config(std::span<const uint8_t> elf) {
  static constexpr std::string_view kStart = "IKCFG_ST", kEnd = "IKCFG_ED";
  std::string_view bytes(reinterpret_cast<const char*>(elf.data()), elf.size());
  // The markers may also appear as plain strings elsewhere: the data is what starts a gzip member.
  // Both are input, so each byte is searched once (the end marker found for one start serves every
  // start before it) and at most kCandidates members are decoded.
  constexpr int kCandidates = 8;
  int decoded = 0;
  size_t end = 0;
  for (size_t at = bytes.find(kStart); at != std::string_view::npos; at = bytes.find(kStart, at + 1)) {
    size_t data = at + kStart.size();
    if (end < data) end = bytes.find(kEnd, data);
    if (end == std::string_view::npos) break;
    std::span<const uint8_t> gzip = elf.subspan(data, end - data);
    if (detect_stream_format(gzip) != StreamFormat::kGzip) continue;
    if (decoded++ == kCandidates) break;
    // A configuration is some 300 KB of text; 16 MiB bounds a hostile one.
    Result<std::vector<uint8_t>> text = decode_stream(StreamFormat::kGzip, {gzip, "IKCONFIG"}, 16 << 20);
    if (text) return std::string(text->begin(), text->end());
  }
  return std::nullopt;
}

std::optional<Finding> five_level_from_config(std::string_view config) {
  if (config_value(config, "CONFIG_X86_64") != "y") return std::nullopt;
  if (std::optional<std::string> levels = config_value(config, "CONFIG_PGTABLE_LEVELS"))
    return Finding{*levels == "5", "CONFIG_PGTABLE_LEVELS=" + *levels};
  std::optional<std::string> five = config_value(config, "CONFIG_X86_5LEVEL");
  if (five == "y") return Finding{true, "CONFIG_X86_5LEVEL=y"};
  return Finding{false, five ? "CONFIG_X86_5LEVEL is not set" : "no CONFIG_X86_5LEVEL"};
}

std::optional<std::string> config_series(std::string_view config) {
  static constexpr std::string_view kPrefix = "# Linux/x86 ";
  size_t at = config.find(kPrefix);
  if (at == std::string_view::npos || at > 256) return std::nullopt;
  std::string_view version = config.substr(at + kPrefix.size());
  version = version.substr(0, version.find(' '));
  std::string series = release_series(version);
  if (series.empty()) return std::nullopt;
  return series;
}

std::string release_series(std::string_view release) {
  // MAJOR.MINOR: digits, a dot, digits.
  size_t dot = release.find('.');
  if (dot == 0 || dot == std::string_view::npos) return "";
  size_t end = dot + 1;
  while (end < release.size() && release[end] >= '0' && release[end] <= '9') ++end;
  std::string_view major = release.substr(0, dot);
  if (end == dot + 1 || !std::all_of(major.begin(), major.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return "";
  return std::string(release.substr(0, end));
}

SystemMap read_system_map(std::string_view text) {
  SystemMap map;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    // "ffffffff82000100 D linux_banner"
    size_t space = line.find(' ');
    if (space == std::string_view::npos || line.size() < space + 3 || line[space + 2] != ' ') continue;
    std::string_view name = line.substr(space + 3);
    if (name == "__pgtable_l5_enabled") map.pgtable_l5_enabled = true;
    if (name != "linux_banner") continue;
    uint64_t address = 0;
    auto [end, error] = std::from_chars(line.data(), line.data() + space, address, 16);
    if (error == std::errc() && end == line.data() + space) map.linux_banner = address;
  }
  return map;
}

std::vector<uint64_t> banner_addresses(std::span<const uint8_t> elf, const KernelHeaders& kernel) {
  static constexpr std::string_view kBanner = "Linux version ";
  std::string_view bytes(reinterpret_cast<const char*>(elf.data()), elf.size());
  std::vector<uint64_t> addresses;
  for (size_t at = bytes.find(kBanner); at != std::string_view::npos; at = bytes.find(kBanner, at + 1))
    for (uint32_t i = 0; i < kernel.segment_count; ++i) {
      const LoadSegment& s = kernel.segments[i];
      if (at >= s.offset && at - s.offset < s.filesz) addresses.push_back(s.vaddr + (at - s.offset));
    }
  return addresses;
}

}  // namespace kpack
