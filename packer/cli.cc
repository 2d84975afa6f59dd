#include "packer/cli.h"

#include <thread>

namespace kpack {

// The text lives in doc/usage.txt, the one source of --help, kpack(1) and the bash completion.
const char kUsage[] =
#include "usage.inc"
    ;

namespace {

Result<uint64_t> parse_number(const std::string& option, const std::string& text) {
  try {
    size_t used = 0;
    unsigned long long value = std::stoull(text, &used, 0);
    if (used == text.size()) return static_cast<uint64_t>(value);
  } catch (...) {
  }
  return Error{"kpack: " + option + " takes a number, not '" + text + "'"};
}

// The word after the option at args[i], which it consumes.
Result<std::string> option_value(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size()) return Error{"kpack: " + args[i] + " needs a value"};
  return args[++i];
}

// The option at args[i] (and its value) applied to `cl`.
Status apply_option(const std::vector<std::string>& args, size_t& i, CommandLine& cl) {
  const std::string& a = args[i];
  if (a == "--raw")
    cl.pack.compress.codec = Codec::kRaw;
  else if (a == "--gzip")
    cl.pack.compress.codec = Codec::kGzip;
  else if (a == "--lz4")
    cl.pack.compress.codec = Codec::kLz4;
  else if (a == "--zstd")
    cl.pack.compress.codec = Codec::kZstd;
  else if (a == "--xz")
    cl.pack.compress.codec = Codec::kXz;
  else if (a == "--randomize-physical")
    cl.pack.randomize_raw_physically = true;
  else if (a == "--elf")
    cl.elf = true;
  else if (a == "--layout") {
    std::string where = KPACK_TRY_RESULT(option_value(args, i));
    if (where != "in-place" && where != "compact")
      return Error{"kpack: --layout takes in-place or compact, not '" + where + "'"};
    cl.pack.raw_layout = where == "compact" ? RawLayout::kCompact : RawLayout::kInPlace;
    cl.layout_given = true;
  } else if (a == "-o" || a == "--output")
    cl.output = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--relocs")
    cl.relocs_output = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--sbat")
    cl.sbat_input = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--from")
    cl.stats_from = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--config")
    cl.hints.config_path = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--system-map")
    cl.hints.system_map_path = KPACK_TRY_RESULT(option_value(args, i));
  else if (a == "--5level" || a == "--no-5level")
    cl.hints.five_level = a == "--5level";
  else if (a == "--kernel-address")
    cl.pack.kernel_address = KPACK_TRY_RESULT(parse_number(a, KPACK_TRY_RESULT(option_value(args, i))));
  else if (a == "--level") {
    uint64_t level = KPACK_TRY_RESULT(parse_number(a, KPACK_TRY_RESULT(option_value(args, i))));
    cl.pack.compress.level = static_cast<int>(std::min<uint64_t>(level, 1000));
    cl.level_given = true;
  } else {
    return Error{"kpack: unknown option '" + a + "' (see kpack --help)"};
  }
  return Ok{};
}

// The command and its one input, from the words that are not options; stats reads the running
// system instead.
Status take_command_and_input(const std::vector<std::string>& words, CommandLine& cl) {
  if (!words.empty() && words[0] == "stats") {
    cl.command = Command::kStats;
    if (words.size() != 1) return Error{"kpack: stats takes no input file (see kpack --help)"};
    return Ok{};
  }
  size_t first = 0;
  if (!words.empty() && (words[0] == "extract" || words[0] == "info")) {
    cl.command = words[0] == "extract" ? Command::kExtract : Command::kInfo;
    first = 1;
  }
  if (words.size() != first + 1) return Error{"kpack: expected one input file (see kpack --help)"};
  cl.input = words[first];
  return Ok{};
}

// Which options go with which command.
Status check_options_fit_command(CommandLine& cl) {
  if (cl.command == Command::kStats) {
    bool others = !cl.output.empty() || !cl.relocs_output.empty() || !cl.sbat_input.empty() || cl.elf;
    return others ? Error{"kpack: stats takes only --from DIR"} : Status{Ok{}};
  }
  if (!cl.stats_from.empty()) return Error{"kpack: --from goes with stats"};
  if (cl.command != Command::kInfo && cl.output.empty()) return Error{"kpack: missing -o OUTPUT"};
  // --relocs FILE: the table to write (extract) or to pack (the default command).
  if (cl.command == Command::kInfo && !cl.relocs_output.empty())
    return Error{"kpack: --relocs goes with extract or packing"};
  if (cl.command == Command::kPack) std::swap(cl.relocs_input, cl.relocs_output);
  if (cl.command != Command::kPack && !cl.sbat_input.empty()) return Error{"kpack: --sbat goes with packing"};
  if (cl.command != Command::kPack && cl.elf) return Error{"kpack: --elf goes with packing"};
  if (cl.elf && !cl.sbat_input.empty()) return Error{"kpack: --sbat is for EFI applications: not with --elf"};
  const KernelHints& hints = cl.hints;
  if (cl.command != Command::kPack &&
      (!hints.config_path.empty() || !hints.system_map_path.empty() || hints.five_level))
    return Error{"kpack: --config, --system-map, --5level and --no-5level go with packing"};
  return Ok{};
}

// The packing options' values, each within what its codec or the boot protocol allows.
Status check_pack_options(CommandLine& cl) {
  Codec codec = cl.pack.compress.codec;
  if (!cl.level_given) cl.pack.compress.level = default_level(codec);
  if (cl.pack.compress.level < min_level(codec) || cl.pack.compress.level > max_level(codec))
    return Error{"kpack: --level " + std::to_string(cl.pack.compress.level) + " is out of range for " +
                 codec_name(codec) + " (" + std::to_string(min_level(codec)) + "-" + std::to_string(max_level(codec)) +
                 ")"};
  std::optional<uint64_t> address = cl.pack.kernel_address;
  if (address && (*address < 0x200000 || *address % 0x200000 || *address >= (1ull << 32)))
    return Error{"kpack: --kernel-address must be a multiple of 2 MiB between 2 MiB and 4 GiB"};
  if (cl.pack.randomize_raw_physically && codec != Codec::kRaw)
    return Error{"kpack: --randomize-physical is for --raw (compressed images always randomize)"};
  if (cl.pack.raw_layout == RawLayout::kCompact && codec != Codec::kRaw)
    return Error{"kpack: --layout compact is for --raw (compressed images are always compact)"};
  // An ELF loader puts the segment at its p_paddr: a raw ELF is compact, its kernel already in place.
  if (cl.elf && cl.layout_given) return Error{"kpack: --layout is for bzImages (an ELF's kernel lies where it runs)"};
  return Ok{};
}

}  // namespace

Result<CommandLine> parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  cl.pack.compress.codec = Codec::kLz4;
  cl.pack.compress.threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // Help and version win over everything after them.
    if (a == "-h" || a == "--help") return CommandLine{.command = Command::kHelp};
    if (a == "--version") return CommandLine{.command = Command::kVersion};
    if (a.size() > 1 && a[0] == '-')
      KPACK_TRY_RESULT(apply_option(args, i, cl));
    else
      positional.push_back(a);
  }
  KPACK_TRY_RESULT(take_command_and_input(positional, cl));
  KPACK_TRY_RESULT(check_options_fit_command(cl));
  KPACK_TRY_RESULT(check_pack_options(cl));
  return cl;
}

}  // namespace kpack
