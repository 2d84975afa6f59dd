// The command line: what to do, parsed without side effects so tests can feed it anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "packer/image/image_writer.h"
#include "packer/input/kernel_facts.h"
#include "packer/base/result.h"

namespace kpack {

enum class Command { kPack, kExtract, kInfo, kStats, kKeys, kHelp, kVersion };

// What a pack says besides errors: -q nothing, -v what it found out and how it laid the image out.
enum class Verbosity { kQuiet, kNormal, kVerbose };

struct CommandLine {
  Command command = Command::kPack;
  std::string help_topic;  // help: a command's name, or empty for the whole summary
  std::string input;
  std::string output;
  std::string relocs_output;                          // extract --relocs
  std::string relocs_input;                           // packing: --relocs FILE, the kernel's relocation table
  std::string sbat_input;                             // packing: --sbat FILE, the .sbat section's contents
  std::string stats_from;                             // stats --from DIR: a copy of /sys/kernel/boot_params/setup_data
  std::string efivars = "/sys/firmware/efi/efivars";  // keys --efivars DIR
  bool pem = false;                                   // keys --pem
  bool layout_given = false;                          // packing: --layout was on the command line
  bool codec_named = false;  // packing: a codec option was given, else default_codec_for chooses
  bool elf = false;          // packing: --elf, an ELF for direct-boot VMMs (elf_writer.h), not a bzImage
  KernelHints hints;         // packing: --config, --system-map, --5level, --no-5level
  PackOptions pack;          // its compress.threads is 0 unless --threads says (main.cc: usable_cpus())
  Verbosity verbosity = Verbosity::kNormal;
};

// Exit status 2 for the errors, each one line starting "kpack: ".
Result<CommandLine> parse_command_line(const std::vector<std::string>& args);

// The help text of a command ("pack", "extract", ...) or, for "", of kpack as a whole (doc/usage.txt);
// nullptr for a word that names no command.
const char* help_text(const std::string& topic);

}  // namespace kpack
