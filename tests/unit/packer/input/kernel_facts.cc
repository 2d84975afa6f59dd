// What the packer finds out about a kernel for the image's header (5-level paging, memory
// acceptance), from each source in its order, on synthetic kernels and on Debian's.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "formats/boot_params.h"
#include "packer/input/bzimage_reader.h"
#include "packer/codecs/codecs.h"
#include "packer/base/file_io.h"
#include "packer/input/kernel_config.h"
#include "packer/input/kernel_input.h"
#include "packer/image/pack_report.h"
#include "packer/input/relocs_from_elf.h"
#include "tests/support/bytes.h"
#include "tests/support/kernel_header_fixture.h"
#include "tests/support/packed_image.h"
#include "tests/support/real_kernel.h"
#include "tests/support/synthetic_kernel.h"
#include "tests/support/temp_dir.h"

using namespace kpack;

namespace {

constexpr char kConfig5[] =
    "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 6.1.192 Kernel Configuration\n#\n"
    "CONFIG_X86_64=y\nCONFIG_PGTABLE_LEVELS=5\nCONFIG_X86_5LEVEL=y\n";
constexpr char kConfig4[] =
    "#\n# Linux/x86 6.1.192 Kernel Configuration\n#\n"
    "CONFIG_X86_64=y\nCONFIG_PGTABLE_LEVELS=4\n# CONFIG_X86_5LEVEL is not set\n";
constexpr char kBanner[] = "Linux version 6.1.0-57-test (builder@example) (gcc 12) #1 SMP Debian 6.1.192-3\n";
constexpr uint64_t kBannerOffset = 0x2000;  // in the first segment, at 0x1000 in the file
constexpr uint64_t kBannerAddress = 0xFFFFFFFF81001000;

// What `kpack` would warn of about `input`, read from `path`.
std::vector<std::string> warnings_about(const std::string& path, const KernelInput& input) {
  Context ctx{.input = path};
  add_pack_warnings(ctx, input);
  return ctx.warnings;
}
constexpr char kWarning[] =
    "warning: %s: cannot tell whether the kernel runs with 5-level paging (no symbol table, no embedded "
    "configuration, no .config or System.map beside it): packed for 4 levels; say --5level or --no-5level, or name "
    "its --config FILE or --system-map FILE";

std::vector<uint8_t> as_bytes(std::string_view text) { return {text.begin(), text.end()}; }

// A vmlinux without symbols, with a banner of release 6.1.0-57-test.
std::vector<uint8_t> vmlinux() {
  std::vector<uint8_t> elf = test::make_kernel_elf(test::typical_segments());
  std::copy(kBanner, kBanner + sizeof(kBanner) - 1, elf.begin() + kBannerOffset);
  return elf;
}

// `elf` with `config` embedded as CONFIG_IKCONFIG does: gzip data between IKCFG_ST and IKCFG_ED.
std::vector<uint8_t> with_ikconfig(std::vector<uint8_t> elf, std::string_view config) {
  std::vector<uint8_t> gzip;
  REQUIRE(append_frame(Context{.output = "config.gz"}, {Codec::kGzip, 9, 1}, as_bytes(config), gzip).ok());
  for (std::string_view part : {"IKCFG_ST"}) elf.insert(elf.end(), part.begin(), part.end());
  elf.insert(elf.end(), gzip.begin(), gzip.end());
  for (std::string_view part : {"IKCFG_ED"}) elf.insert(elf.end(), part.begin(), part.end());
  return elf;
}

KernelInput load(const std::string& path, const KernelHints& hints = {}) {
  Result<KernelInput> input = load_kernel(Context{.input = path}, hints);
  REQUIRE_MESSAGE(input.ok(), (input.ok() ? "" : input.error().message));
  return std::move(*input);
}

std::string load_error(const std::string& path, const KernelHints& hints) {
  Result<KernelInput> input = load_kernel(Context{.input = path}, hints);
  REQUIRE_FALSE(input.ok());
  return input.error().message;
}

std::string warning_for(const std::string& path) {
  char text[512];
  std::snprintf(text, sizeof(text), kWarning, path.c_str());
  return text;
}

uint16_t xloadflags_of(const KernelInput& input) {
  return test::get<uint16_t>(test::pack_image(input, Codec::kRaw), 0x236);
}

}  // namespace

TEST_CASE("a configuration says whether the kernel has 5-level paging, and which line says so") {
  auto answer = [](std::string_view config) {
    std::optional<Finding> found = five_level_from_config(config);
    return found ? std::string(found->value ? "yes: " : "no: ") + found->source : std::string("nothing");
  };
  CHECK(answer(kConfig5) == "yes: CONFIG_PGTABLE_LEVELS=5");
  CHECK(answer(kConfig4) == "no: CONFIG_PGTABLE_LEVELS=4");
  // From 6.16, CONFIG_X86_5LEVEL is gone and 5-level paging is always built in.
  CHECK(answer("CONFIG_X86_64=y\nCONFIG_PGTABLE_LEVELS=5\n") == "yes: CONFIG_PGTABLE_LEVELS=5");
  CHECK(answer("CONFIG_X86_64=y\nCONFIG_X86_5LEVEL=y\n") == "yes: CONFIG_X86_5LEVEL=y");
  CHECK(answer("CONFIG_X86_64=y\n# CONFIG_X86_5LEVEL is not set") == "no: CONFIG_X86_5LEVEL is not set");
  CHECK(answer("CONFIG_X86_64=y\n") == "no: no CONFIG_X86_5LEVEL");  // older than 5-level paging
  CHECK(answer("CONFIG_ARM64=y\nCONFIG_PGTABLE_LEVELS=4\n") == "nothing");
  CHECK(answer("# CONFIG_X86_64 is not set\nCONFIG_PGTABLE_LEVELS=2\n") == "nothing");
  CHECK(answer("") == "nothing");

  CHECK(config_series(kConfig5) == "6.1");
  CHECK(config_series("CONFIG_X86_64=y\n") == std::nullopt);
  CHECK(release_series("6.1.0-57-cloud-amd64") == "6.1");
  CHECK(release_series("6.12.117+deb12-cloud-amd64") == "6.12");
  CHECK(release_series("4.19.0") == "4.19");
  CHECK(release_series("garbage").empty());
}

TEST_CASE("the embedded configuration is the gzip data between IKCFG_ST and IKCFG_ED") {
  CHECK(embedded_config(vmlinux()) == std::nullopt);
  CHECK(embedded_config(with_ikconfig(vmlinux(), kConfig5)) == std::string(kConfig5));
  // The marker alone, as a string elsewhere in the kernel, is no configuration.
  std::vector<uint8_t> markers = vmlinux();
  for (std::string_view text : {"IKCFG_ST not gzip IKCFG_ED"}) markers.insert(markers.end(), text.begin(), text.end());
  CHECK(embedded_config(markers) == std::nullopt);
}

TEST_CASE("the embedded configuration: many start markers cost one search for the end marker") {
  // 200,000 start markers before the real configuration: once a search to the end marker per start
  // (some 2 * 10^11 byte compares), now each byte looked at once.
  std::vector<uint8_t> elf = vmlinux();
  for (int i = 0; i < 200000; ++i) elf.insert(elf.end(), {'I', 'K', 'C', 'F', 'G', '_', 'S', 'T'});
  std::vector<uint8_t> with = with_ikconfig(elf, kConfig5);
  CHECK(embedded_config(with) == std::string(kConfig5));
}

TEST_CASE("a System.map names linux_banner and __pgtable_l5_enabled") {
  SystemMap map = read_system_map(
      "ffffffff81000000 T _text\nffffffff82a00100 D linux_banner\n"
      "ffffffff83000000 B __pgtable_l5_enabled\n");
  CHECK(map.linux_banner == 0xffffffff82a00100);
  CHECK(map.pgtable_l5_enabled);
  // Debian's /boot/System.map-* is one line saying where the real one is.
  map = read_system_map("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n");
  CHECK_FALSE(map.linux_banner.has_value());
  CHECK_FALSE(map.pgtable_l5_enabled);

  Result<KernelHeaders> kernel = parse_vmlinux({vmlinux(), "vmlinux"});
  REQUIRE(kernel.ok());
  CHECK(banner_addresses(vmlinux(), *kernel) == std::vector<uint64_t>{kBannerAddress});
}

TEST_CASE("5-level paging: a vmlinux without symbols, then each source, first answer wins") {
  test::TempDir dir;
  const std::string path = dir.write("vmlinux", vmlinux());

  // Nothing says: 4 levels, and one warning naming the options.
  KernelInput input = load(path);
  CHECK_FALSE(input.five_level_paging);
  CHECK(input.five_level_source.empty());
  CHECK(warnings_about(path, input).front() == warning_for(path));
  CHECK(xloadflags_of(input) == 0x2B);
  // The user says.
  input = load(path, {.five_level = true});
  CHECK(input.five_level_paging);
  CHECK(input.five_level_source == "--5level");
  CHECK(xloadflags_of(input) == 0x6B);
  CHECK(warnings_about(path, input).front().find("5-level") == std::string::npos);

  // The embedded configuration.
  const std::string embedded = dir.write("vmlinux.ikconfig", with_ikconfig(vmlinux(), kConfig5));
  input = load(embedded);
  CHECK(input.five_level_paging);
  CHECK(input.five_level_source == "the kernel's embedded configuration (CONFIG_PGTABLE_LEVELS=5)");
  CHECK(xloadflags_of(input) == 0x6B);
  input = load(dir.write("vmlinux.ikconfig4", with_ikconfig(vmlinux(), kConfig4)));
  CHECK_FALSE(input.five_level_paging);
  CHECK(input.five_level_source == "the kernel's embedded configuration (CONFIG_PGTABLE_LEVELS=4)");

  // A file the user names, which must not contradict an earlier answer.
  dir.write("four.config", as_bytes(kConfig4));
  input = load(path, {.config_path = dir / "four.config"});
  CHECK_FALSE(input.five_level_paging);
  CHECK(input.five_level_source == dir / "four.config (CONFIG_PGTABLE_LEVELS=4)");
  CHECK(load_error(embedded, {.config_path = dir / "four.config"}) ==
        dir / "four.config: says 5-level paging no, but the kernel's embedded configuration (CONFIG_PGTABLE_LEVELS=5) "
              "says yes (for " +
            embedded + ")");
  CHECK(load_error(path, {.config_path = dir / "missing"}) == dir / "missing: no such file");
  dir.write("other.config", as_bytes("# Linux/x86 5.10.0 Kernel Configuration\nCONFIG_X86_64=y\n"));
  CHECK(load_error(path, {.config_path = dir / "other.config"}) ==
        dir / "other.config: is the configuration of a Linux 5.10 kernel, not of 6.1.0-57-test");
  dir.write("notes.txt", as_bytes("some notes\n"));
  CHECK(load_error(path, {.config_path = dir / "notes.txt"}) ==
        dir / "notes.txt: is not an x86-64 kernel configuration (no CONFIG_X86_64=y)");
  // --5level against a kernel known to lack it would start the kernel in a mode it cannot run in.
  CHECK(load_error(path, {.config_path = dir / "four.config", .five_level = true}) ==
        path + ": --5level, but " + dir / "four.config (CONFIG_PGTABLE_LEVELS=4)" +
            " says the kernel has no 5-level paging");
  input = load(embedded, {.five_level = false});
  CHECK_FALSE(input.five_level_paging);
  CHECK(input.five_level_source == "--no-5level");
}

TEST_CASE("5-level paging from a .config, config-RELEASE or System.map beside the vmlinux") {
  test::TempDir dir;
  const std::string path = dir.write("vmlinux", vmlinux());
  // Debian's placeholder System.map says nothing, and -v says why it was passed over.
  dir.write("System.map-6.1.0-57-test",
            as_bytes("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n"));
  KernelInput input = load(path);
  CHECK(input.five_level_source.empty());
  CHECK(input.findings.front().rfind("passed over " + dir / "System.map-6.1.0-57-test: it has no linux_banner", 0) ==
        0);
  // /boot's name for the configuration.
  dir.write("config-6.1.0-57-test", as_bytes(kConfig5));
  input = load(path);
  CHECK(input.five_level_paging);
  CHECK(input.five_level_source == dir / "config-6.1.0-57-test (CONFIG_PGTABLE_LEVELS=5)");
  // kbuild's, which comes first; one for another kernel is passed over.
  dir.write(".config", as_bytes("# Linux/x86 6.12.1 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_PGTABLE_LEVELS=4\n"));
  input = load(path);
  CHECK(input.five_level_source == dir / "config-6.1.0-57-test (CONFIG_PGTABLE_LEVELS=5)");
  CHECK(input.findings.front() == "passed over " + dir /
                                                       ".config: it is the configuration of a Linux 6.12 kernel, "
                                                       "not of 6.1.0-57-test");
  dir.write(".config", as_bytes(kConfig4));
  CHECK(load(path).five_level_source == dir / ".config (CONFIG_PGTABLE_LEVELS=4)");

  // A System.map counts when its linux_banner is where this kernel's banner is.
  test::TempDir other;
  const std::string bare = other.write("vmlinux", vmlinux());
  other.write("System.map", as_bytes("ffffffff81001000 D linux_banner\nffffffff83000000 B __pgtable_l5_enabled\n"));
  input = load(bare);
  CHECK(input.five_level_paging);
  CHECK(input.five_level_source == other / "System.map (__pgtable_l5_enabled)");
  other.write("System.map", as_bytes("ffffffff81002000 D linux_banner\nffffffff83000000 B __pgtable_l5_enabled\n"));
  input = load(bare);
  CHECK(input.five_level_source.empty());
  CHECK(input.findings.front() == "passed over " + other /
                                                       "System.map: it belongs to another kernel: its "
                                                       "linux_banner, 0xffffffff81002000, is not where this "
                                                       "kernel's banner is");
}

namespace {

// Debian's kernel as `kpack extract` writes it (no symbols), in `dir`, and its /boot configuration.
struct Extracted {
  std::string vmlinux, config;
  uint16_t stock_xloadflags = 0, repacked_xloadflags = 0;
};

Extracted extract_debian(const test::TempDir& dir, const std::string& series) {
  const std::string vmlinuz = test::real_kernel_path(series);
  Result<std::vector<uint8_t>> file = read_file(vmlinuz);
  REQUIRE(file.ok());
  Result<BzImage> image = read_bzimage({*file, vmlinuz});
  REQUIRE(image.ok());
  Result<KernelPayload> payload = extract_kernel(*image, {*file, vmlinuz});
  REQUIRE(payload.ok());
  Extracted out;
  out.vmlinux = dir.write("vmlinux", payload->elf);
  const std::string name = std::filesystem::path(vmlinuz).filename();
  out.config = std::filesystem::path(vmlinuz).parent_path() / ("config-" + name.substr(name.find('-') + 1));
  out.stock_xloadflags = image->header.xloadflags;
  out.repacked_xloadflags = xloadflags_of(load(vmlinuz));
  return out;
}

void check_debian(const std::string& series) {
  test::TempDir dir;
  Extracted kernel = extract_debian(dir, series);
  CAPTURE(kernel.vmlinux);
  // Stock says 5-level (XLF_5LEVEL | XLF_5LEVEL_ENABLED), and so does the image packed from it.
  CHECK((kernel.stock_xloadflags & 0x60) == 0x60);
  CHECK(kernel.repacked_xloadflags == 0x6B);

  // Without symbols or an embedded configuration (Debian builds without CONFIG_IKCONFIG): unknown.
  KernelInput input = load(kernel.vmlinux);
  CHECK(embedded_config(input.elf) == std::nullopt);
  CHECK(elf_defines_symbol(input.elf, "__pgtable_l5_enabled") == std::nullopt);
  CHECK(input.five_level_source.empty());
  CHECK(xloadflags_of(input) == 0x2B);
  CHECK(warnings_about(kernel.vmlinux, input).front() == warning_for(kernel.vmlinux));

  // With Debian's configuration embedded as CONFIG_IKCONFIG would: the stock flags.
  Result<std::vector<uint8_t>> config = read_file(kernel.config);
  REQUIRE(config.ok());
  const std::string text(config->begin(), config->end());
  input = load(dir.write("vmlinux.ikconfig", with_ikconfig(input.elf, text)));
  CHECK(input.five_level_source == "the kernel's embedded configuration (CONFIG_PGTABLE_LEVELS=5)");
  CHECK(xloadflags_of(input) == kernel.repacked_xloadflags);

  // With its .config beside it; and named with --config from /boot.
  dir.write(".config", *config);
  input = load(kernel.vmlinux);
  CHECK(input.five_level_source == dir / ".config (CONFIG_PGTABLE_LEVELS=5)");
  CHECK(xloadflags_of(input) == kernel.repacked_xloadflags);
  std::filesystem::remove(dir / ".config");
  input = load(kernel.vmlinux, {.config_path = kernel.config});
  CHECK(input.five_level_source == kernel.config + " (CONFIG_PGTABLE_LEVELS=5)");
}

}  // namespace

TEST_CASE("[real kernel] Debian's 6.1 vmlinux from kpack extract: without, then with, its configuration") {
  check_debian("");
}

TEST_CASE("[real kernel] Debian's 6.12 vmlinux from kpack extract: without, then with, its configuration") {
  check_debian("6.12");
}

// A kernel whose layout kpack refuses says which kernel it is: Debian's 7.3 headers with its banner
// behind them, cut short of the segments, as a truncated vmlinux is.
TEST_CASE("a refused vmlinux's error names the file, the kernel's release, the rule and its values") {
  std::vector<uint8_t> elf = test::real_kernel_headers("7.3.4+deb13-cloud-amd64");
  const std::string banner =
      "Linux version 7.3.4+deb13-cloud-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-14 (Debian "
      "14.2.0-19) 14.2.0, GNU ld (GNU Binutils for Debian) 2.44) #1 SMP PREEMPT_DYNAMIC Debian 7.3.4-1~bpo13+1 "
      "(2026-11-15)\n";
  elf.insert(elf.end(), banner.begin(), banner.end());
  Result<KernelHeaders> kernel = parse_vmlinux({elf, "vmlinux-7.3"});
  REQUIRE_FALSE(kernel.ok());
  CHECK(kernel.error().message ==
        "vmlinux-7.3: kernel 7.3.4+deb13-cloud-amd64: segment extends past the end of the file (0x200000, 0x1f67b44)");
  elf.resize(elf.size() - banner.size());  // no banner: the same line without the release
  CHECK(parse_vmlinux({elf, "vmlinux-7.3"}).error().message ==
        "vmlinux-7.3: segment extends past the end of the file (0x200000, 0x1f67b44)");
}
