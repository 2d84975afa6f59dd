#include "packer/cli/cli.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

namespace kpack {

namespace {

// doc/usage.txt as doc/render_usage.cc renders it: the whole summary first (topic ""), then each
// command's help and the flags its synopsis names (" -o --output --relocs "). The synopsis is the
// one list of which options go with which command: --help, the man page, the completion and this
// parser all read it.
struct HelpEntry {
  const char* topic;
  const char* text;
  const char* flags;
};
constexpr HelpEntry kHelp[] = {
#include "usage.inc"
};

const HelpEntry* help_entry(const std::string& topic) {
  for (const HelpEntry& entry : kHelp)
    if (topic == entry.topic) return &entry;
  return nullptr;
}

bool takes(const HelpEntry& command, const std::string& flag) {
  return std::string_view(command.flags).find(" " + flag + " ") != std::string_view::npos;
}

std::string command_name(const std::string& topic) { return topic == "pack" ? "packing" : topic; }

// "packing and extract": the commands whose synopsis names `flag`.
std::string commands_taking(const std::string& flag) {
  std::vector<std::string> names;
  for (const HelpEntry& entry : kHelp)
    if (*entry.topic && takes(entry, flag)) names.push_back(command_name(entry.topic));
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

std::string topics() {
  std::string text;
  for (const HelpEntry& entry : kHelp)
    if (*entry.topic) text += (text.empty() ? "" : ", ") + std::string(entry.topic);
  return text;
}

// The options that take a value, by their name in messages, with their other spelling.
struct ValueOption {
  const char* name;
  const char* alias;
};
constexpr ValueOption kValueOptions[] = {
    {"-o", "--output"},     {"--relocs", nullptr},     {"--sbat", nullptr},           {"--from", nullptr},
    {"--config", nullptr},  {"--system-map", nullptr}, {"--kernel-address", nullptr}, {"--level", nullptr},
    {"--threads", nullptr}, {"--layout", nullptr},     {"--efivars", nullptr},
};

const char* value_option(const std::string& flag) {
  for (const ValueOption& o : kValueOptions)
    if (flag == o.name || (o.alias && flag == o.alias)) return o.name;
  return nullptr;
}

constexpr std::pair<const char*, Codec> kCodecFlags[] = {
    {"--raw", Codec::kRaw},   {"--gzip", Codec::kGzip}, {"--lz4", Codec::kLz4},
    {"--zstd", Codec::kZstd}, {"--xz", Codec::kXz},
};

// The words of the command line sorted out, before they are checked against each other.
struct Words {
  std::vector<std::string> positional;
  std::vector<std::string> flags;  // every option as typed, in order
  struct Given {
    std::string flag;  // as typed: -o or --output
    std::string value;
  };
  std::map<std::string, Given> values;                  // by the option's name
  std::string codec_flag, verbosity_flag, paging_flag;  // as typed, when given
  bool elf = false, randomize_physical = false, pem = false;
};

// Two switches that cannot both hold: the one seen first in `seen`.
Status one_of(std::string& seen, const std::string& flag, const char* what) {
  if (!seen.empty() && seen != flag)
    return Error{"kpack: " + seen + " and " + flag + " conflict: choose one" + (*what ? " " : "") + what};
  seen = flag;
  return Ok{};
}

// The option at args[i] (and its value, which it consumes) recorded in `words`.
Status take_option(const std::vector<std::string>& args, size_t& i, Words& words) {
  const std::string& a = args[i];
  words.flags.push_back(a);
  if (const char* name = value_option(a)) {
    if (i + 1 >= args.size() || args[i + 1].empty()) return Error{"kpack: " + a + " needs a value"};
    const std::string& value = args[++i];
    auto [at, added] = words.values.try_emplace(name, Words::Given{a, value});
    if (!added)
      return Error{"kpack: " + std::string(name) + " given twice (" + at->second.flag + " " + at->second.value +
                   ", then " + a + " " + value + ")"};
    return Ok{};
  }
  for (auto [flag, codec] : kCodecFlags)
    if (a == flag) return one_of(words.codec_flag, a, "codec");
  if (a == "-q" || a == "-v") return one_of(words.verbosity_flag, a, "");
  if (a == "--5level" || a == "--no-5level") return one_of(words.paging_flag, a, "");
  if (a == "--elf")
    words.elf = true;
  else if (a == "--randomize-physical")
    words.randomize_physical = true;
  else if (a == "--pem")
    words.pem = true;
  else
    return Error{"kpack: unknown option '" + a + "' (see kpack --help)"};
  return Ok{};
}

// Every word sorted: options until "--", which ends them; the rest positional. Help and version
// are gone by now (help_or_version).
Result<Words> sort_words(const std::vector<std::string>& args) {
  Words words;
  bool options = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options && a == "--")
      options = false;
    else if (options && a.size() > 1 && a[0] == '-')
      KPACK_TRY_RESULT(take_option(args, i, words));
    else
      words.positional.push_back(a);
  }
  return words;
}

// Help and version win over whatever else the line holds, even mistakes: they are what a user who
// got the line wrong asks for. Only what comes before "--" counts, and an option's value is skipped.
std::optional<CommandLine> help_or_version(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if (a == "--version") return CommandLine{.command = Command::kVersion};
    if (a == "-h" || a == "--help") {
      // kpack info --help, kpack help extract --help: that command's help; else the whole summary.
      CommandLine cl{.command = Command::kHelp};
      if (!positional.empty() && positional[0] == "help" && positional.size() > 1 && help_entry(positional[1]))
        cl.help_topic = positional[1];
      else if (!positional.empty() && positional[0] != "pack" && help_entry(positional[0]))
        cl.help_topic = positional[0];
      return cl;
    }
    if (value_option(a))
      ++i;
    else if (a.size() <= 1 || a[0] != '-')
      positional.push_back(a);
  }
  return std::nullopt;
}

// The command and its one input, from the words that are not options; stats reads the running
// system instead, help names a command or none.
Status take_command_and_input(const std::vector<std::string>& words, CommandLine& cl) {
  const std::string first = words.empty() ? "" : words[0];
  if (first == "help") {
    cl.command = Command::kHelp;
    if (words.size() > 2) return Error{"kpack: help takes one command at most (" + topics() + ")"};
    if (words.size() == 2 && !help_entry(words[1]))
      return Error{"kpack: help: no command '" + words[1] + "' (" + topics() + ")"};
    if (words.size() == 2) cl.help_topic = words[1];
    return Ok{};
  }
  if (first == "stats" || first == "keys") {
    cl.command = first == "stats" ? Command::kStats : Command::kKeys;
    if (words.size() != 1) return Error{"kpack: " + first + " takes no input file (see kpack help " + first + ")"};
    return Ok{};
  }
  size_t input = 0;
  if (first == "extract" || first == "info") {
    cl.command = first == "extract" ? Command::kExtract : Command::kInfo;
    input = 1;
  }
  if (words.size() != input + 1) return Error{"kpack: expected one input file (see kpack --help)"};
  cl.input = words[input];
  return Ok{};
}

std::string topic_of(Command command) {
  switch (command) {
    case Command::kPack: return "pack";
    case Command::kExtract: return "extract";
    case Command::kInfo: return "info";
    case Command::kStats: return "stats";
    case Command::kKeys: return "keys";
    case Command::kHelp: return "help";
    case Command::kVersion: break;
  }
  return "";
}

// Each option given goes with the command (its synopsis names it); then the values go where they
// belong.
Status apply_options(const Words& words, CommandLine& cl) {
  const std::string topic = topic_of(cl.command);
  const HelpEntry* command = help_entry(topic);
  for (const std::string& flag : words.flags)
    if (!command || !takes(*command, flag))
      return Error{"kpack: " + flag + " goes with " + commands_taking(flag) + ", not " + command_name(topic)};
  auto value = [&words](const char* name) {
    auto at = words.values.find(name);
    return at == words.values.end() ? std::string() : at->second.value;
  };
  cl.output = value("-o");
  (cl.command == Command::kPack ? cl.relocs_input : cl.relocs_output) = value("--relocs");
  cl.sbat_input = value("--sbat");
  cl.stats_from = value("--from");
  if (!value("--efivars").empty()) cl.efivars = value("--efivars");
  cl.pem = words.pem;
  cl.hints.config_path = value("--config");
  cl.hints.system_map_path = value("--system-map");
  if (!words.paging_flag.empty()) cl.hints.five_level = words.paging_flag == "--5level";
  for (auto [flag, codec] : kCodecFlags)
    if (words.codec_flag == flag) cl.pack.compress.codec = codec, cl.codec_named = true;
  cl.elf = words.elf;
  cl.pack.randomize_raw_physically = words.randomize_physical;
  if (words.verbosity_flag == "-q") cl.verbosity = Verbosity::kQuiet;
  if (words.verbosity_flag == "-v") cl.verbosity = Verbosity::kVerbose;
  if ((cl.command == Command::kPack || cl.command == Command::kExtract) && cl.output.empty())
    return Error{"kpack: missing -o OUTPUT"};
  return Ok{};
}

// A decimal number as typed, optionally signed; a leading zero does not make it octal. Saturates
// far beyond any range checked here; nullopt for anything else.
std::optional<int64_t> decimal(const std::string& text) {
  size_t at = text.size() > 1 && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (at == text.size()) return std::nullopt;
  int64_t value = 0;
  for (; at < text.size(); ++at) {
    if (text[at] < '0' || text[at] > '9') return std::nullopt;
    value = std::min<int64_t>(value * 10 + (text[at] - '0'), int64_t{1} << 40);
  }
  return text[0] == '-' ? -value : value;
}

// An address in decimal, or in hexadecimal after 0x.
std::optional<uint64_t> address(const std::string& text) {
  bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (!hex) {
    std::optional<int64_t> value = decimal(text);
    return value && *value >= 0 && text[0] != '+' ? std::optional<uint64_t>(*value) : std::nullopt;
  }
  uint64_t value = 0;
  for (size_t at = 2; at < text.size(); ++at) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[at])));
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0 || value >> 60) return std::nullopt;
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  return value;
}

// The packing options' values, each within what its codec or the boot protocol allows; errors
// quote what was typed.
Status check_pack_options(const Words& words, CommandLine& cl) {
  const Codec codec = cl.pack.compress.codec;
  auto given = [&words](const char* name) -> const std::string* {
    auto at = words.values.find(name);
    return at == words.values.end() ? nullptr : &at->second.value;
  };
  cl.pack.compress.level = default_level(codec);
  if (const std::string* text = given("--level")) {
    if (!cl.codec_named)
      return Error{"kpack: --level needs a codec (--lz4, --zstd, --xz or --gzip): the default one follows the input"};
    if (codec == Codec::kRaw) return Error{"kpack: --level does not apply to --raw (nothing is compressed)"};
    std::optional<int64_t> level = decimal(*text);
    if (!level) return Error{"kpack: --level takes a decimal number, not '" + *text + "'"};
    if (*level < min_level(codec) || *level > max_level(codec))
      return Error{"kpack: --level " + *text + " is out of range for " + codec_name(codec) + " (" +
                   std::to_string(min_level(codec)) + "-" + std::to_string(max_level(codec)) + ")"};
    cl.pack.compress.level = static_cast<int>(*level);
  }
  cl.pack.compress.threads = 0;  // the CPUs this process may run on (main.cc)
  if (const std::string* text = given("--threads")) {
    if (codec == Codec::kRaw) return Error{"kpack: --threads does not apply to --raw (nothing is compressed)"};
    std::optional<int64_t> threads = decimal(*text);
    if (!threads || *threads < 1 || *threads > 1024)
      return Error{"kpack: --threads takes a number from 1 to 1024, not '" + *text + "'"};
    cl.pack.compress.threads = static_cast<unsigned>(*threads);
  }
  if (const std::string* text = given("--kernel-address")) {
    std::optional<uint64_t> at = address(*text);
    if (!at)
      return Error{"kpack: --kernel-address takes a number (decimal, or hexadecimal after 0x), not '" + *text + "'"};
    if (*at < 0x200000 || *at % 0x200000 || *at >= (uint64_t{1} << 32))
      return Error{"kpack: --kernel-address " + *text + " is not a multiple of 2 MiB between 2 MiB and 4 GiB"};
    cl.pack.kernel_address = *at;
  }
  if (cl.pack.randomize_raw_physically && codec != Codec::kRaw)
    return Error{"kpack: --randomize-physical is for --raw (compressed images always randomize)"};
  if (const std::string* where = given("--layout")) {
    if (*where != "in-place" && *where != "compact")
      return Error{"kpack: --layout takes in-place or compact, not '" + *where + "'"};
    // An ELF loader puts the segment at its p_paddr: a raw ELF is compact, its kernel already in place.
    if (cl.elf) return Error{"kpack: --layout is for bzImages (an ELF's kernel lies where it runs)"};
    if (codec != Codec::kRaw) return Error{"kpack: --layout is for --raw (compressed images are always compact)"};
    cl.pack.raw_layout = *where == "compact" ? RawLayout::kCompact : RawLayout::kInPlace;
    cl.layout_given = true;
  }
  if (cl.elf && !cl.sbat_input.empty()) return Error{"kpack: --sbat is for EFI applications: not with --elf"};
  return Ok{};
}

}  // namespace

const char* help_text(const std::string& topic) {
  const HelpEntry* entry = help_entry(topic);
  return entry ? entry->text : nullptr;
}

Result<CommandLine> parse_command_line(const std::vector<std::string>& args) {
  if (std::optional<CommandLine> asked = help_or_version(args)) return *asked;
  Words words = KPACK_TRY_RESULT(sort_words(args));
  CommandLine cl;
  cl.pack.compress.codec = Codec::kLz4;
  KPACK_TRY_RESULT(take_command_and_input(words.positional, cl));
  KPACK_TRY_RESULT(apply_options(words, cl));
  if (cl.command == Command::kPack) KPACK_TRY_RESULT(check_pack_options(words, cl));
  return cl;
}

}  // namespace kpack
