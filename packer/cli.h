// The command line: what to do, parsed without side effects so tests can feed it anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "packer/image_writer.h"
#include "packer/kernel_facts.h"
#include "packer/result.h"

namespace kpack {

enum class Command { kPack, kExtract, kInfo, kStats, kHelp, kVersion };

struct CommandLine {
  Command command = Command::kPack;
  std::string input;
  std::string output;
  std::string relocs_output;  // extract --relocs
  std::string relocs_input;   // packing: --relocs FILE, the kernel's relocation table
  std::string sbat_input;     // packing: --sbat FILE, the .sbat section's contents
  std::string stats_from;     // stats --from DIR: a copy of /sys/kernel/boot_params/setup_data
  bool layout_given = false;  // packing: --layout was on the command line
  bool elf = false;           // packing: --elf, an ELF for direct-boot VMMs (elf_writer.h), not a bzImage
  KernelHints hints;          // packing: --config, --system-map, --5level, --no-5level
  PackOptions pack;
  bool level_given = false;
};

Result<CommandLine> parse_command_line(const std::vector<std::string>& args);

extern const char kUsage[];

}  // namespace kpack
