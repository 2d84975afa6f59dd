#include <doctest/doctest.h>

#include "packer/cli/cli.h"

using namespace kpack;

namespace {

Result<CommandLine> parse(std::vector<std::string> args) { return parse_command_line(args); }

}  // namespace

TEST_CASE("the pack command line") {
  Result<CommandLine> cl = parse({"--raw", "vmlinux", "-o", "bzImage"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kPack);
  CHECK(cl->pack.compress.codec == Codec::kRaw);
  CHECK(cl->input == "vmlinux");
  CHECK(cl->output == "bzImage");
  CHECK_FALSE(cl->pack.kernel_address.has_value());  // the kernel's link address

  cl = parse({"vmlinux", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK_FALSE(cl->codec_named);  // the input decides (default_codec_for), once it is read
  CHECK(parse({"--raw", "vmlinux", "-o", "out"})->codec_named);

  cl = parse({"--lz4", "--level", "12", "--kernel-address", "0x1000000", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->pack.compress.codec == Codec::kLz4);
  CHECK(cl->pack.compress.level == 12);
  CHECK(cl->pack.kernel_address == 0x1000000);

  cl = parse({"--sbat", "sbat.csv", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->sbat_input == "sbat.csv");

  cl = parse({"--xz", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->pack.compress.codec == Codec::kXz);
  CHECK(cl->pack.compress.level == 9);
  CHECK_FALSE(cl->elf);

  cl = parse({"--elf", "--zstd", "in", "-o", "out.elf"});  // the ELF output, any codec
  REQUIRE(cl.ok());
  CHECK(cl->elf);
  CHECK(cl->pack.compress.codec == Codec::kZstd);
}

TEST_CASE("extract, info, help and version") {
  Result<CommandLine> cl = parse({"extract", "bzImage", "-o", "vmlinux", "--relocs", "r"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kExtract);
  CHECK(cl->relocs_output == "r");
  cl = parse({"vmlinux", "-o", "out", "--relocs", "vmlinux.relocs"});  // packing: the table to use
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kPack);
  CHECK(cl->relocs_input == "vmlinux.relocs");
  CHECK(cl->relocs_output.empty());
  cl = parse({"info", "bzImage"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kInfo);
  CHECK(parse({"--version"})->command == Command::kVersion);
}

TEST_CASE("help: the whole summary, or one command's") {
  auto topic = [](std::vector<std::string> args) {
    Result<CommandLine> cl = parse_command_line(args);
    REQUIRE(cl.ok());
    CHECK(cl->command == Command::kHelp);
    return cl->help_topic;
  };
  CHECK(topic({"--help"}) == "");
  CHECK(topic({"help"}) == "");
  CHECK(topic({"help", "extract"}) == "extract");
  CHECK(topic({"help", "pack"}) == "pack");
  CHECK(topic({"info", "--help"}) == "info");
  CHECK(topic({"stats", "-h"}) == "stats");
  CHECK(topic({"help", "info", "--help"}) == "info");
  CHECK(topic({"vmlinux", "-o", "x", "--help"}) == "");         // no command word: the whole summary
  CHECK(topic({"--bogus", "extract", "--help"}) == "extract");  // help wins over mistakes
  CHECK(topic({"-o", "info", "--help"}) == "");                 // "info" is -o's value, not a command
  // After --, --help is a file name.
  CHECK(parse({"-o", "x", "--", "--help"})->input == "--help");

  for (const char* command : {"", "pack", "extract", "info", "stats", "keys", "help"}) {
    const char* text = help_text(command);
    REQUIRE(text != nullptr);
    CHECK(std::string(text).rfind("usage: kpack ", 0) == 0);
  }
  CHECK(std::string(help_text("extract")).rfind("usage: kpack extract IMAGE -o VMLINUX [--relocs FILE]\n", 0) == 0);
  CHECK(std::string(help_text("extract")).find("--relocs FILE") != std::string::npos);
  CHECK(std::string(help_text("info")).find("--relocs") == std::string::npos);  // info takes no option
  CHECK(help_text("bogus") == nullptr);
}

TEST_CASE("options: -q, -v, --threads, -- and the levels in decimal") {
  Result<CommandLine> cl = parse({"-q", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->verbosity == Verbosity::kQuiet);
  cl = parse({"in", "-v", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->verbosity == Verbosity::kVerbose);
  CHECK(cl->pack.compress.threads == 0);  // not given: main.cc asks usable_cpus()
  cl = parse({"--threads", "3", "in", "--output", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->pack.compress.threads == 3);
  CHECK(cl->output == "out");
  cl = parse({"--lz4", "--level", "010", "in", "-o", "out"});  // ten, not octal eight
  REQUIRE(cl.ok());
  CHECK(cl->pack.compress.level == 10);
  cl = parse({"--kernel-address", "0x2000000", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->pack.kernel_address == 0x2000000);
  cl = parse({"--kernel-address", "033554432", "in", "-o", "out"});  // decimal with a leading zero
  REQUIRE(cl.ok());
  CHECK(cl->pack.kernel_address == 33554432);
  cl = parse({"-o", "out", "--", "-vmlinux"});
  REQUIRE(cl.ok());
  CHECK(cl->input == "-vmlinux");
  cl = parse({"--lz4", "--lz4", "in", "-o", "out"});  // the same codec twice is no conflict
  REQUIRE(cl.ok());
  cl = parse({"--raw", "--layout", "compact", "in", "-o", "out"});
  REQUIRE(cl.ok());
  CHECK(cl->pack.raw_layout == RawLayout::kCompact);
  CHECK(cl->layout_given);
  cl = parse({"stats", "--from", "dir"});
  REQUIRE(cl.ok());
  CHECK(cl->stats_from == "dir");
}

TEST_CASE("bad command lines are one-line errors") {
  auto error = [](std::vector<std::string> args) {
    Result<CommandLine> cl = parse_command_line(args);
    REQUIRE_FALSE(cl.ok());
    CHECK(cl.error().message.find('\n') == std::string::npos);
    return cl.error().message;
  };
  CHECK(error({"vmlinux"}) == "kpack: missing -o OUTPUT");
  CHECK(error({"extract", "bzImage"}) == "kpack: missing -o OUTPUT");
  CHECK(error({"-o", "x"}) == "kpack: expected one input file (see kpack --help)");
  CHECK(error({"a", "b", "-o", "x"}) == "kpack: expected one input file (see kpack --help)");
  CHECK(error({"--bogus", "a", "-o", "x"}) == "kpack: unknown option '--bogus' (see kpack --help)");
  CHECK(error({"a", "-o"}) == "kpack: -o needs a value");
  CHECK(error({"a", "-o", ""}) == "kpack: -o needs a value");
  CHECK(error({"--gzip", "--level", "10", "a", "-o", "x"}) == "kpack: --level 10 is out of range for gzip (1-9)");
  CHECK(error({"--xz", "--level", "0", "a", "-o", "x"}) == "kpack: --level 0 is out of range for xz (1-9)");
  CHECK(error({"--gzip", "--level", "010", "a", "-o", "x"}) == "kpack: --level 010 is out of range for gzip (1-9)");
  CHECK(error({"--lz4", "--level", "-1", "a", "-o", "x"}) == "kpack: --level -1 is out of range for lz4 (1-12)");
  CHECK(error({"--lz4", "--level", "5000", "a", "-o", "x"}) == "kpack: --level 5000 is out of range for lz4 (1-12)");
  CHECK(error({"--lz4", "--level", "99999999999999999999", "a", "-o", "x"}) ==
        "kpack: --level 99999999999999999999 is out of range for lz4 (1-12)");
  CHECK(error({"--zstd", "--level", "ten", "a", "-o", "x"}) == "kpack: --level takes a decimal number, not 'ten'");
  CHECK(error({"--zstd", "--level", "0x5", "a", "-o", "x"}) == "kpack: --level takes a decimal number, not '0x5'");
  CHECK(error({"--level", "9", "a", "-o", "x"}) ==
        "kpack: --level needs a codec (--lz4, --zstd, --xz or --gzip): the default one follows the input");
  CHECK(error({"--raw", "--level", "5", "a", "-o", "x"}) ==
        "kpack: --level does not apply to --raw (nothing is compressed)");
  CHECK(error({"--raw", "--threads", "2", "a", "-o", "x"}) ==
        "kpack: --threads does not apply to --raw (nothing is compressed)");
  CHECK(error({"--threads", "0", "a", "-o", "x"}) == "kpack: --threads takes a number from 1 to 1024, not '0'");
  CHECK(error({"--threads", "two", "a", "-o", "x"}) == "kpack: --threads takes a number from 1 to 1024, not 'two'");
  CHECK(error({"--kernel-address", "0x300000", "a", "-o", "x"}) ==
        "kpack: --kernel-address 0x300000 is not a multiple of 2 MiB between 2 MiB and 4 GiB");
  CHECK(error({"--kernel-address", "16M", "a", "-o", "x"}) ==
        "kpack: --kernel-address takes a number (decimal, or hexadecimal after 0x), not '16M'");
  CHECK(error({"--lz4", "--zstd", "a", "-o", "x"}) == "kpack: --lz4 and --zstd conflict: choose one codec");
  CHECK(error({"--raw", "a", "-o", "x", "--xz"}) == "kpack: --raw and --xz conflict: choose one codec");
  CHECK(error({"-q", "-v", "a", "-o", "x"}) == "kpack: -q and -v conflict: choose one");
  CHECK(error({"--5level", "--no-5level", "a", "-o", "x"}) == "kpack: --5level and --no-5level conflict: choose one");
  CHECK(error({"a", "-o", "x", "-o", "y"}) == "kpack: -o given twice (-o x, then -o y)");
  CHECK(error({"a", "--output", "x", "-o", "y"}) == "kpack: -o given twice (--output x, then -o y)");
  CHECK(error({"--level", "1", "--level", "2", "a", "-o", "x"}) ==
        "kpack: --level given twice (--level 1, then --level 2)");
  CHECK(error({"info", "a", "--relocs", "r"}) == "kpack: --relocs goes with packing and extract, not info");
  CHECK(error({"info", "a", "--level", "3"}) == "kpack: --level goes with packing, not info");
  CHECK(error({"info", "a", "-o", "x"}) == "kpack: -o goes with packing and extract, not info");
  CHECK(error({"extract", "a", "-o", "x", "--zstd"}) == "kpack: --zstd goes with packing, not extract");
  CHECK(error({"extract", "a", "-o", "x", "--sbat", "s"}) == "kpack: --sbat goes with packing, not extract");
  CHECK(error({"a", "-o", "x", "--sbat"}) == "kpack: --sbat needs a value");
  CHECK(error({"extract", "a", "-o", "x", "--elf"}) == "kpack: --elf goes with packing, not extract");
  CHECK(error({"info", "a", "--elf"}) == "kpack: --elf goes with packing, not info");
  CHECK(error({"info", "a", "-q"}) == "kpack: -q goes with packing, not info");
  CHECK(error({"stats", "--elf"}) == "kpack: --elf goes with packing, not stats");
  CHECK(error({"help", "--lz4"}) == "kpack: --lz4 goes with packing, not help");
  CHECK(error({"help", "bogus"}) == "kpack: help: no command 'bogus' (pack, extract, info, stats, keys, help)");
  CHECK(error({"help", "info", "stats"}) ==
        "kpack: help takes one command at most (pack, extract, info, stats, keys, help)");
  CHECK(error({"--elf", "a", "-o", "x", "--sbat", "s"}) == "kpack: --sbat is for EFI applications: not with --elf");
  CHECK(error({"--elf", "--layout", "in-place", "a", "-o", "x"}) ==
        "kpack: --layout is for bzImages (an ELF's kernel lies where it runs)");
  CHECK(error({"--zstd", "--layout", "in-place", "a", "-o", "x"}) ==
        "kpack: --layout is for --raw (compressed images are always compact)");
  CHECK(error({"--raw", "--layout", "middle", "a", "-o", "x"}) ==
        "kpack: --layout takes in-place or compact, not 'middle'");
  CHECK(error({"--", "-o", "x"}) == "kpack: expected one input file (see kpack --help)");  // -o is a file after --
}

TEST_CASE("the stats command line") {
  Result<CommandLine> cl = parse({"stats"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kStats);
  CHECK(cl->stats_from.empty());

  cl = parse({"stats", "--from", "copy/setup_data"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kStats);
  CHECK(cl->stats_from == "copy/setup_data");

  cl = parse({"stats", "image"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: stats takes no input file (see kpack help stats)");
  cl = parse({"stats", "-o", "out"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: -o goes with packing and extract, not stats");
  cl = parse({"info", "image", "--from", "dir"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: --from goes with stats, not info");
}

TEST_CASE("the keys command line") {
  Result<CommandLine> cl = parse({"keys"});
  REQUIRE(cl.ok());
  CHECK(cl->command == Command::kKeys);
  CHECK(cl->efivars == "/sys/firmware/efi/efivars");
  CHECK_FALSE(cl->pem);

  cl = parse({"keys", "--pem", "--efivars", "/target/efivars"});
  REQUIRE(cl.ok());
  CHECK(cl->efivars == "/target/efivars");
  CHECK(cl->pem);

  cl = parse({"keys", "db"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: keys takes no input file (see kpack help keys)");
  cl = parse({"info", "image", "--pem"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: --pem goes with keys, not info");
  cl = parse({"stats", "--efivars", "dir"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: --efivars goes with keys, not stats");
}
