// check_vmm_elf FILE...: replays the VMMs' ELF loaders on each file (vmm_elf_rules.h). Prints one
// line per file that passes, one per violation otherwise. Exit: 0 all pass, 1 a violation or an
// unreadable file, 2 usage.
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/support/vmm_elf_rules.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE...\n", argv[0]);
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", argv[i]);
      status = 1;
      continue;
    }
    std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    kpack::test::VmmElfVerdict verdict = kpack::test::check_vmm_elf(file);
    for (const std::string& violation : verdict.violations) std::printf("%s: %s\n", argv[i], violation.c_str());
    if (!verdict.ok()) {
      status = 1;
      continue;
    }
    std::printf("%s: rust-vmm (Firecracker, Cloud Hypervisor) and QEMU take it: PVH entry 0x%" PRIx64
                ", e_entry 0x%" PRIx64 ", %u PT_LOAD\n",
                argv[i], verdict.pvh_entry, verdict.entry, verdict.load_segments);
  }
  return status;
}
