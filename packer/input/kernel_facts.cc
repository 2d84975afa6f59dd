#include "packer/input/kernel_facts.h"

#include <algorithm>

#include "packer/base/file_io.h"
#include "packer/input/kernel_config.h"
#include "packer/input/kernel_input.h"
#include "packer/input/kernel_version.h"
#include "packer/input/relocs_from_elf.h"

namespace kpack {

namespace {

std::string yes_no(bool value) { return value ? "yes" : "no"; }

// A file that may tell: what it says, or why it cannot (it belongs to another kernel, it says nothing).
struct Reading {
  std::optional<Finding> answer;
  std::string problem;
};

// A configuration's answer, when it is one for the kernel whose release is `release`.
Reading read_config(const std::string& text, const std::string& path, const std::optional<std::string>& release) {
  std::optional<Finding> answer = five_level_from_config(text);
  if (!answer) return {std::nullopt, "is not an x86-64 kernel configuration (no CONFIG_X86_64=y)"};
  std::optional<std::string> series = config_series(text);
  if (release && series && *series != release_series(*release))
    return {std::nullopt, "is the configuration of a Linux " + *series + " kernel, not of " + *release};
  return {Finding{answer->value, path + " (" + answer->source + ")"}, ""};
}

// A System.map's answer, when its linux_banner is where this kernel holds its banner.
Reading read_map(const std::string& text, const std::string& path, const KernelInput& input) {
  SystemMap map = read_system_map(text);
  if (!map.linux_banner)
    return {std::nullopt,
            "has no linux_banner symbol to tie it to the kernel (Debian's /boot/System.map-* is a "
            "placeholder; the real one is in the -dbg package)"};
  std::vector<uint64_t> banners = banner_addresses(input.elf, input.kernel);
  if (std::find(banners.begin(), banners.end(), *map.linux_banner) == banners.end())
    return {std::nullopt, "belongs to another kernel: its linux_banner, " + hex(*map.linux_banner) +
                              ", is not where this kernel's banner is"};
  return {Finding{map.pgtable_l5_enabled,
                  path + (map.pgtable_l5_enabled ? " (__pgtable_l5_enabled)" : " (no __pgtable_l5_enabled)")},
          ""};
}

Result<Reading> read_hint_file(const std::string& path, bool is_map, const KernelInput& input,
                               const std::optional<std::string>& release) {
  std::vector<uint8_t> bytes = KPACK_TRY_RESULT(read_file(path));
  std::string text(bytes.begin(), bytes.end());
  return is_map ? read_map(text, path, input) : read_config(text, path, release);
}

// The files kbuild and /boot keep beside a kernel, in the directory of `path`.
std::vector<std::pair<std::string, bool>> files_beside(const std::string& path,
                                                       const std::optional<std::string>& release) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::vector<std::pair<std::string, bool>> files = {{dir + ".config", false}};
  if (release) files.push_back({dir + "config-" + *release, false});
  files.push_back({dir + "System.map", true});
  if (release) files.push_back({dir + "System.map-" + *release, true});
  return files;
}

// 5-level paging from the kernel's own bytes: its symbol table, then its embedded configuration.
std::optional<Finding> five_level_in_elf(const KernelInput& input) {
  if (std::optional<bool> symbol = elf_defines_symbol(input.elf, "__pgtable_l5_enabled"))
    return Finding{*symbol, *symbol ? "the kernel's symbol table (__pgtable_l5_enabled)"
                                    : "the kernel's symbol table (no __pgtable_l5_enabled)"};
  if (std::optional<std::string> config = embedded_config(input.elf))
    if (std::optional<Finding> answer = five_level_from_config(*config))
      return Finding{answer->value, "the kernel's embedded configuration (" + answer->source + ")"};
  return std::nullopt;
}

}  // namespace

Status infer_kernel_facts(KernelInput& input, const std::string& path, const KernelHints& hints,
                          std::optional<Finding> header) {
  std::optional<Finding> found = header ? header : five_level_in_elf(input);
  std::optional<std::string> version = version_from_banner(input.elf);
  std::optional<std::string> release;
  if (version) release = version->substr(0, version->find(' '));

  // The files the user named are read whatever the answer so far: one that does not fit is a mistake.
  for (auto [named, is_map] : {std::pair{hints.config_path, false}, std::pair{hints.system_map_path, true}}) {
    if (named.empty()) continue;
    Reading reading = KPACK_TRY_RESULT(read_hint_file(named, is_map, input, release));
    if (!reading.answer) return error_in(named, reading.problem);
    if (found && found->value != reading.answer->value)
      return error_in(named, "says 5-level paging " + yes_no(reading.answer->value) + ", but " + found->source +
                                 " says " + yes_no(found->value) + " (for " + path + ")");
    if (!found) found = reading.answer;
  }
  for (auto [beside, is_map] : files_beside(path, release)) {
    if (found) break;
    Result<Reading> reading = read_hint_file(beside, is_map, input, release);
    if (!reading) continue;  // no such file, most often
    if (reading->answer)
      found = reading->answer;
    else
      input.findings.push_back("passed over " + beside + ": it " + reading->problem);
  }

  if (hints.five_level == true && found && !found->value)
    return error_in(path, "--5level, but " + found->source + " says the kernel has no 5-level paging");
  if (hints.five_level) found = Finding{*hints.five_level, *hints.five_level ? "--5level" : "--no-5level"};
  input.five_level_paging = found && found->value;
  input.five_level_source = found ? found->source : "";
  input.findings.push_back("5-level paging: " +
                           (found ? yes_no(found->value) + ", from " + found->source : "unknown, packed for 4 levels"));

  // Any kind of input says this one (kernel_input_from_elf looked): the unaccepted memory table's
  // GUID is in the kernel exactly when it accepts memory itself.
  input.findings.push_back(std::string("memory acceptance: ") +
                           (input.accepts_memory ? "by the kernel (its code holds the unaccepted memory table's GUID)"
                                                 : "by the firmware (no unaccepted memory table GUID in the kernel)"));
  return Ok{};
}

}  // namespace kpack
