#include <doctest/doctest.h>

#include "packer/cli.h"

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
  CHECK(cl->pack.compress.codec == Codec::kLz4);  // the default codec
  CHECK(cl->pack.compress.level == default_level(Codec::kLz4));

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
  CHECK(parse({"--help"})->command == Command::kHelp);
  CHECK(parse({"--version"})->command == Command::kVersion);
}

TEST_CASE("bad command lines are one-line errors") {
  auto error = [](std::vector<std::string> args) {
    Result<CommandLine> cl = parse_command_line(args);
    REQUIRE_FALSE(cl.ok());
    CHECK(cl.error().message.find('\n') == std::string::npos);
    return cl.error().message;
  };
  CHECK(error({"vmlinux"}) == "kpack: missing -o OUTPUT");
  CHECK(error({"-o", "x"}) == "kpack: expected one input file (see kpack --help)");
  CHECK(error({"a", "b", "-o", "x"}) == "kpack: expected one input file (see kpack --help)");
  CHECK(error({"--bogus", "a", "-o", "x"}) == "kpack: unknown option '--bogus' (see kpack --help)");
  CHECK(error({"a", "-o"}) == "kpack: -o needs a value");
  CHECK(error({"--gzip", "--level", "10", "a", "-o", "x"}) == "kpack: --level 10 is out of range for gzip (1-9)");
  CHECK(error({"--xz", "--level", "0", "a", "-o", "x"}) == "kpack: --level 0 is out of range for xz (1-9)");
  CHECK(error({"--level", "ten", "a", "-o", "x"}) == "kpack: --level takes a number, not 'ten'");
  CHECK(error({"--kernel-address", "0x300000", "a", "-o", "x"}) ==
        "kpack: --kernel-address must be a multiple of 2 MiB between 2 MiB and 4 GiB");
  CHECK(error({"info", "a", "--relocs", "r"}) == "kpack: --relocs goes with extract or packing");
  CHECK(error({"extract", "a", "-o", "x", "--sbat", "s"}) == "kpack: --sbat goes with packing");
  CHECK(error({"a", "-o", "x", "--sbat"}) == "kpack: --sbat needs a value");
  CHECK(error({"extract", "a", "-o", "x", "--elf"}) == "kpack: --elf goes with packing");
  CHECK(error({"info", "a", "--elf"}) == "kpack: --elf goes with packing");
  CHECK(error({"stats", "--elf"}) == "kpack: stats takes only --from DIR");
  CHECK(error({"--elf", "a", "-o", "x", "--sbat", "s"}) == "kpack: --sbat is for EFI applications: not with --elf");
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
  CHECK(cl.error().message == "kpack: stats takes no input file (see kpack --help)");
  cl = parse({"stats", "-o", "out"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: stats takes only --from DIR");
  cl = parse({"info", "image", "--from", "dir"});
  REQUIRE_FALSE(cl.ok());
  CHECK(cl.error().message == "kpack: --from goes with stats");
}
