// The EFI entry's use of EFI_MEMORY_ATTRIBUTE_PROTOCOL (stub/efi/efi_memory_attributes.cc), run on
// the host against a fake firmware: Debian 12's OVMF has no such protocol, so no boot reaches it.
// Every executable segment, page-rounded where the kernel went, becomes read-only and executable;
// nothing else is touched, and a firmware without the protocol or refusing a call is handled.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "formats/elf64.h"
#include "stub/efi/efi_boot.h"

using namespace kpack;
using namespace kpack::efi;

namespace {

struct Call {
  bool set;  // set_memory_attributes, else clear_memory_attributes
  uint64_t base, length, attributes;
};

std::vector<Call> calls;
MemoryAttribute* offered = nullptr;  // what locate_protocol hands out, null: not found
EfiStatus answer = kSuccess;         // what every attribute call returns

KPACK_EFIAPI EfiStatus locate(const Guid* protocol, void*, void** interface) {
  if (!offered || std::memcmp(protocol, &kMemoryAttributeProtocol, sizeof(Guid)) != 0) return kNotFound;
  *interface = offered;
  return kSuccess;
}
KPACK_EFIAPI EfiStatus set_attributes(MemoryAttribute*, uint64_t base, uint64_t length, uint64_t attributes) {
  calls.push_back({true, base, length, attributes});
  return answer;
}
KPACK_EFIAPI EfiStatus clear_attributes(MemoryAttribute*, uint64_t base, uint64_t length, uint64_t attributes) {
  calls.push_back({false, base, length, attributes});
  return answer;
}

// A kernel linked at 16 MiB: text (R E), data (RW), a second executable segment whose end is not
// page-aligned, placed by the engine at 0x7e00000.
UnpackResult placed_kernel() {
  UnpackResult r;
  r.kernel.segments[0] = {0x200000,  0x1000000, 0xffffffff81000000,   0x1826710,
                          0x1826710, 0x200000,  elf::kPfR | elf::kPfX};
  r.kernel.segments[1] = {0x1c00000, 0x2a00000, 0xffffffff82a00000,   0x61a000,
                          0x61a000,  0x200000,  elf::kPfR | elf::kPfW};
  r.kernel.segments[2] = {
      0x244e000, 0x304e000, 0xffffffff8304e000, 0x1234, 0x1800, 0x1000, elf::kPfR | elf::kPfW | elf::kPfX};
  r.kernel.segment_count = 3;
  r.kernel.physical = {0x1000000, 0x304f800};
  r.base = 0x7e00000;
  return r;
}

EfiStatus protect(const UnpackResult& result) {
  BootServices boot{};
  boot.locate_protocol = locate;
  calls.clear();
  return protect_kernel_text(Firmware{nullptr, nullptr, &boot}, result);
}

}  // namespace

TEST_CASE("memory attributes: each executable segment read-only and executable where it went") {
  MemoryAttribute protocol{nullptr, set_attributes, clear_attributes};
  offered = &protocol, answer = kSuccess;
  CHECK(protect(placed_kernel()) == kSuccess);
  REQUIRE(calls.size() == 4);
  // Text: 0x7e00000 + 0x1826710 rounded up to its page.
  CHECK(
      (calls[0].set && calls[0].base == 0x7e00000 && calls[0].length == 0x1827000 && calls[0].attributes == kMemoryRo));
  CHECK((!calls[1].set && calls[1].base == 0x7e00000 && calls[1].length == 0x1827000 &&
         calls[1].attributes == kMemoryXp));
  // The data segment is skipped; the last one sits 0x204e000 above the base, memsz 0x1800 -> 2 pages.
  CHECK((calls[2].set && calls[2].base == 0x9e4e000 && calls[2].length == 0x2000 && calls[2].attributes == kMemoryRo));
  CHECK((!calls[3].set && calls[3].base == 0x9e4e000 && calls[3].length == 0x2000 && calls[3].attributes == kMemoryXp));
}

TEST_CASE("memory attributes: firmware without the protocol is left alone") {
  offered = nullptr;
  CHECK(protect(placed_kernel()) == kSuccess);
  CHECK(calls.empty());
}

TEST_CASE("memory attributes: a refused call stops at once and says why") {
  MemoryAttribute protocol{nullptr, set_attributes, clear_attributes};
  offered = &protocol, answer = kInvalidParameter;
  CHECK(protect(placed_kernel()) == kInvalidParameter);
  CHECK(calls.size() == 1);  // the first set, not the clear, nor the next segment
}
