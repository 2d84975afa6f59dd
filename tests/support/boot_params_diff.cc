// boot_params_diff A B [--allow FIELD[:MASK][,...]] [--labels LA,LB]
// boot_params_diff --extract A OUT
// boot_params_diff --get FIELD A
//
// Compares two boot_params pages, each given as a raw 4096-byte file or as a serial log holding
// the KPACK_BOOT_PARAMS dump of tests/boot/init.c (the last complete one), and prints one line per
// differing field: "name: A | B", arrays (e820_table, edd_mbr_sig_buffer, eddbuf) one line per
// differing entry, opaque byte arrays (screen_info, edid_info, ...) as their differing runs. With
// --allow, differences in the listed fields (or entries, "e820_table[2]") are marked "(allowed)";
// FIELD:MASK allows a scalar to differ in the bits of MASK only.
//
// --extract writes A's page to OUT as 4096 raw bytes; --get prints the value of a scalar field of A
// in decimal ("screen_info.orig_video_cols"), for scripts.
//
// Exit status: 0 no differences but allowed ones, 1 some other difference, 2 usage or bad input.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/boot_params_diff.h"

using namespace kpack::test::bpdiff;

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: boot_params_diff A B [--allow FIELD[:MASK][,...]] [--labels LA,LB]\n"
               "       boot_params_diff --extract A OUT\n"
               "       boot_params_diff --get FIELD A\n");
  return 2;
}

bool load(const std::string& path, Page* page) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "boot_params_diff: cannot read %s\n", path.c_str());
    return false;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  auto parsed = parse_input(text, &error);
  if (!parsed) {
    std::fprintf(stderr, "boot_params_diff: %s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  *page = std::move(*parsed);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--extract") {
    if (argc != 4) return usage();
    Page page;
    if (!load(argv[2], &page)) return 2;
    std::ofstream out(argv[3], std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(page.data()), static_cast<std::streamsize>(page.size()));
    if (!out.flush()) {
      std::fprintf(stderr, "boot_params_diff: cannot write %s\n", argv[3]);
      return 2;
    }
    return 0;
  }
  if (argc >= 2 && std::string(argv[1]) == "--get") {
    if (argc != 4) return usage();
    Page page;
    if (!load(argv[3], &page)) return 2;
    auto value = get_scalar(page, argv[2]);
    if (!value) {
      std::fprintf(stderr, "boot_params_diff: no scalar field named '%s'\n", argv[2]);
      return 2;
    }
    std::printf("%llu\n", static_cast<unsigned long long>(*value));
    return 0;
  }
  std::vector<std::string> files;
  std::vector<Allow> allow;
  std::string labels;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--allow" || arg == "--labels") {
      if (i + 1 >= argc) return usage();
      std::string value = argv[++i];
      if (arg == "--labels") {
        labels = value;
        continue;
      }
      std::string error;
      if (!parse_allow(value, &allow, &error)) {
        std::fprintf(stderr, "boot_params_diff: %s\n", error.c_str());
        return 2;
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage();
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) return usage();
  Page a, b;
  if (!load(files[0], &a) || !load(files[1], &b)) return 2;

  if (labels.empty()) labels = files[0] + "," + files[1];
  std::printf("boot_params_diff: A | B = %s\n", labels.c_str());
  size_t bad = 0, allowed = 0;
  for (const Difference& d : diff(a, b, allow)) {
    std::printf("%s\n", d.line().c_str());
    (d.allowed ? allowed : bad)++;
  }
  std::printf("boot_params_diff: %zu difference(s) not allowed, %zu allowed\n", bad, allowed);
  return bad == 0 ? 0 : 1;
}
