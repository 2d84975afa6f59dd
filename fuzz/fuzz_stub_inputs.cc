// fuzz_stub_inputs: the stub's parsers of what a loader or a user hands it, each on hostile bytes.
// The first byte picks one:
//   0  the kernel command line: parse_stub_options and parse_kaslr_options, then the memory the
//      command line reserves taken out of free memory (remove_reserved_memory): no free byte may
//      then lie in a reserved range, at or above the memory limit, or outside memmap=exactmap's RAM;
//   1  UTF-16 LoadOptions (the EFI entry's command line): the UTF-8 text fits, ends in its NUL and
//      holds no NUL or newline before it;
//   2  hvm_start_info, its memory map and its first module (the PVH entry): a start_info that
//      passes the check becomes boot_params with the map, the initrd and the protocol's fields.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "formats/boot_params.h"
#include "formats/pvh.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/self_test.h"
#include "stub/entry/pvh_boot_params.h"
#include "stub/machine/free_memory.h"
#include "stub/machine/reserved_memory.h"
#include "stub/options/kaslr_options.h"
#include "stub/options/stub_options.h"
#include "stub/options/utf16_command_line.h"

using namespace kpack;

namespace {

// What the option parsers promise, whatever the command line.
void check_options(const StubOptions& o) {
  FUZZ_CHECK(o.disabled_apic_id >= -1 && o.disabled_apic_id <= int64_t{UINT32_MAX});
  const KaslrOptions& k = o.kaslr;
  FUZZ_CHECK(k.kaslr_memmap_count <= kMaxMemmapRegions && k.memory.reserved_count <= kMaxReservedRanges &&
             k.memory.exact_ram_count <= kMaxReservedRanges);
}

// Free memory once the command line's reservations are out (`removed`: whether taking them out
// succeeded): no free byte in a reserved range, at or above the limit, or outside exactmap's RAM.
void check_free_memory(const KaslrOptions& k, const FreeMemory& free, bool removed) {
  if (!removed) {
    FUZZ_CHECK(k.memory.overflow);
    return;
  }
  FreeMemory exact_ram;  // the union of exactmap's RAM ranges, which may overlap
  for (uint32_t r = 0; r < k.memory.exact_ram_count; ++r) FUZZ_REQUIRE(exact_ram.add(k.memory.exact_ram[r]).ok());
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range f = free.at(i);
    FUZZ_CHECK(f.end <= k.memory_limit || f.empty());
    for (uint32_t r = 0; r < k.memory.reserved_count; ++r)
      FUZZ_CHECK(k.memory.reserved[r].empty() || !k.memory.reserved[r].overlaps(f));
    if (k.memory.exactmap) FUZZ_CHECK(exact_ram.contains(f));
  }
}

void check_command_line(const char* text, uint64_t length) {
  StubOptions o = parse_stub_options(text, length);
  check_options(o);
  FreeMemory free;
  FUZZ_REQUIRE(free.add({1 << 20, 1ull << 36}).ok());
  bool removed = remove_reserved_memory(o.kaslr, free).ok();
  check_free_memory(o.kaslr, free, removed);
}

// The UTF-8 command line in `out` (of `capacity` bytes): it fits, ends in its NUL, and holds no NUL
// or newline before it.
void check_utf8(const char* out, uint32_t length, size_t capacity) {
  FUZZ_CHECK(length < capacity && out[length] == 0);
  FUZZ_CHECK(std::memchr(out, 0, length) == nullptr && std::memchr(out, '\n', length) == nullptr);
}

void check_load_options(const uint8_t* data, size_t size) {
  std::vector<char16_t> units(size / 2);
  if (!units.empty()) std::memcpy(units.data(), data, units.size() * 2);
  char out[2048];
  std::memset(out, 0x55, sizeof(out));
  uint32_t length = utf16_command_line_to_utf8(units.data(), units.size(), out, sizeof(out));
  check_utf8(out, length, sizeof(out));
}

// boot_params made from a start_info: its map, the protocol's fields, and the first module as the
// initrd.
void check_converted(const pvh::StartInfo& info, const pvh::Module* module, const boot::BootParams& params) {
  FUZZ_CHECK(params.e820_entries >= info.memmap_entries && params.e820_entries <= boot::kE820MaxEntries);
  FUZZ_CHECK(params.hdr.version == kPvhBootProtocol && params.hdr.type_of_loader == kPvhLoaderType);
  uint64_t initrd = params.hdr.ramdisk_image | (uint64_t{params.ext_ramdisk_image} << 32);
  uint64_t initrd_size = params.hdr.ramdisk_size | (uint64_t{params.ext_ramdisk_size} << 32);
  FUZZ_CHECK(info.nr_modules ? initrd == module->paddr && initrd_size == module->size
                             : initrd == 0 && initrd_size == 0);
}

void check_start_info(const uint8_t* data, size_t size) {
  pvh::StartInfo info{};
  std::memcpy(&info, data, std::min(size, sizeof(info)));
  if (!check_pvh_start_info(info, 1ull << 32).ok()) return;
  // The map and the module follow the start_info in the input, zero-padded.
  std::vector<uint8_t> rest(sizeof(pvh::MemmapEntry) * boot::kE820MaxEntries + sizeof(pvh::Module), 0);
  if (size > sizeof(info)) std::memcpy(rest.data(), data + sizeof(info), std::min(size - sizeof(info), rest.size()));
  const auto* map = reinterpret_cast<const pvh::MemmapEntry*>(rest.data());
  const auto* module =
      reinterpret_cast<const pvh::Module*>(rest.data() + sizeof(pvh::MemmapEntry) * info.memmap_entries);
  boot::BootParams params;
  std::memset(static_cast<void*>(&params), 0xAA, sizeof(params));  // poison: every field the conversion sets is checked
  boot_params_from_start_info(info, map, info.nr_modules ? module : nullptr, &params);
  check_converted(info, module, params);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  switch (data[0] % 3) {
    case 0: check_command_line(reinterpret_cast<const char*>(data + 1), size - 1); break;
    case 1: check_load_options(data + 1, size - 1); break;
    case 2: check_start_info(data + 1, size - 1); break;
  }
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above with spoiled parser output.
namespace {

KaslrOptions free_of(std::initializer_list<Range> reserved) {
  KaslrOptions k;
  for (Range r : reserved) k.memory.reserved[k.memory.reserved_count++] = r;
  return k;
}

FreeMemory one_range(Range r) {
  FreeMemory free;
  FUZZ_REQUIRE(free.add(r).ok());
  return free;
}

boot::BootParams converted(const pvh::StartInfo& info) {
  boot::BootParams params{};
  params.e820_entries = static_cast<uint8_t>(info.memmap_entries);
  params.hdr.version = kPvhBootProtocol;
  params.hdr.type_of_loader = kPvhLoaderType;
  return params;
}

}  // namespace

FUZZ_SPOIL("an APIC ID below -1") {
  StubOptions o;
  o.disabled_apic_id = -2;
  check_options(o);
}
FUZZ_SPOIL("more memmap= regions than KASLR keeps") {
  StubOptions o;
  o.kaslr.kaslr_memmap_count = kMaxMemmapRegions + 1;
  check_options(o);
}
FUZZ_SPOIL("reservations refused without an overflow") { check_free_memory(KaslrOptions{}, FreeMemory{}, false); }
FUZZ_SPOIL("free memory above mem=") {
  KaslrOptions k;
  k.memory_limit = 2 << 20;
  check_free_memory(k, one_range({1 << 20, 4 << 20}), true);
}
FUZZ_SPOIL("free memory in a memmap= region") {
  check_free_memory(free_of({{2 << 20, 3 << 20}}), one_range({1 << 20, 4 << 20}), true);
}
FUZZ_SPOIL("free memory outside exactmap's RAM") {
  KaslrOptions k;
  k.memory.exactmap = true;
  check_free_memory(k, one_range({1 << 20, 4 << 20}), true);
}
FUZZ_SPOIL("a command line without its NUL") { check_utf8("abcd", 3, 5); }
FUZZ_SPOIL("a command line with a newline") { check_utf8("a\nb", 3, 5); }
FUZZ_SPOIL("a memory map with an entry lost") {
  pvh::StartInfo info{};
  info.memmap_entries = 2;
  boot::BootParams params = converted(info);
  params.e820_entries = 1;
  check_converted(info, nullptr, params);
}
FUZZ_SPOIL("boot_params of another protocol") {
  pvh::StartInfo info{};
  boot::BootParams params = converted(info);
  params.hdr.version = 0;
  check_converted(info, nullptr, params);
}
FUZZ_SPOIL("a module that did not become the initrd") {
  pvh::StartInfo info{};
  info.nr_modules = 1;
  pvh::Module module{};
  module.paddr = 0x100000;
  module.size = 0x1000;
  check_converted(info, &module, converted(info));
}
#endif
