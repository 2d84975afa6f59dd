#include "packer/input/kernel_version.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace kpack {
namespace {

// Length of the parenthesised group at the start of `text` (nested parentheses included), or 0.
size_t group_length(std::string_view text) {
  if (text.empty() || text[0] != '(') return 0;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1;
  }
  return 0;
}

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}

}  // namespace

std::optional<std::string> version_from_bzimage(std::span<const uint8_t> file, const boot::SetupHeader& header,
                                                uint64_t setup_size) {
  if (header.kernel_version == 0 || header.version < 0x0200) return std::nullopt;
  uint64_t at = 0x200 + uint64_t{header.kernel_version};
  uint64_t end = std::min<uint64_t>(setup_size, file.size());
  if (at >= end) return std::nullopt;
  const char* text = reinterpret_cast<const char*>(file.data() + at);
  size_t length = strnlen(text, std::min<uint64_t>(end - at, kMaxVersionLength + 1));
  if (length == 0 || length > kMaxVersionLength || at + length >= end) return std::nullopt;
  std::string version(text, length);
  if (!printable(version)) return std::nullopt;
  return version;
}

namespace {

// Parses one banner line (after "Linux version "); the version part is returned in `uts_version`.
std::optional<std::string> parse_banner(std::string_view line, std::string_view* uts_version) {
  line = line.substr(0, line.find_first_of(std::string_view("\n\0", 2)));
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view release = line.substr(0, space);
  std::string_view rest = line.substr(space + 1);
  size_t builder = group_length(rest);  // (user@host)
  if (!builder || rest.size() < builder + 1) return std::nullopt;
  std::string_view after_builder = rest.substr(builder + 1);
  size_t compiler = group_length(after_builder);  // (gcc ..., GNU ld ...)
  *uts_version = compiler ? after_builder.substr(std::min(compiler + 1, after_builder.size())) : after_builder;
  std::string result =
      std::string(release) + " " + std::string(rest.substr(0, builder)) + " " + std::string(*uts_version);
  if (result.size() > kMaxVersionLength || !printable(result)) return std::nullopt;
  return result;
}

}  // namespace

std::optional<std::string> version_from_banner(std::span<const uint8_t> elf) {
  static constexpr std::string_view kPrefix = "Linux version ";
  std::string_view bytes(reinterpret_cast<const char*>(elf.data()), elf.size());
  // Kernels carry more than one banner (6.1 has one without the build number, "# SMP ..."): the
  // one printed at boot has "#<build number>".
  std::optional<std::string> first;
  for (size_t at = bytes.find(kPrefix); at != std::string_view::npos; at = bytes.find(kPrefix, at + 1)) {
    std::string_view uts_version;
    std::optional<std::string> version = parse_banner(bytes.substr(at + kPrefix.size(), 1024), &uts_version);
    if (!version) continue;
    if (uts_version.size() > 1 && uts_version[0] == '#' && uts_version[1] >= '0' && uts_version[1] <= '9')
      return version;
    if (!first) first = version;
  }
  return first;
}

}  // namespace kpack
