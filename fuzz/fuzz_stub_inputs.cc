// fuzz_stub_inputs: the stub's parsers of what a loader or a user hands it, each on hostile bytes.
// The first byte picks one:
//   0  the kernel command line: parse_stub_options and parse_kaslr_options, then the memory the
//      command line reserves taken out of free memory (remove_reserved_memory): no free byte may
//      then lie in a reserved range, at or above the memory limit, or outside memmap=exactmap's RAM;
//   1  UTF-16 LoadOptions (the EFI entry's command line): the UTF-8 text fits, ends in its NUL and
//      holds no NUL or newline before it;
//   2  hvm_start_info, its memory map and its first module (the PVH entry): a start_info that
//      passes the check becomes boot_params with the map, the initrd and the protocol's fields.
#include <cstring>
#include <vector>

#include "formats/boot_params.h"
#include "formats/pvh.h"
#include "fuzz/fuzz_check.h"
#include "stub/entry/pvh_boot_params.h"
#include "stub/machine/free_memory.h"
#include "stub/machine/reserved_memory.h"
#include "stub/options/kaslr_options.h"
#include "stub/options/stub_options.h"
#include "stub/options/utf16_command_line.h"

using namespace kpack;

namespace {

void check_command_line(const char* text, uint64_t length) {
  StubOptions o = parse_stub_options(text, length);
  FUZZ_CHECK(o.disabled_apic_id >= -1 && o.disabled_apic_id <= int64_t{UINT32_MAX});
  const KaslrOptions& k = o.kaslr;
  FUZZ_CHECK(k.kaslr_memmap_count <= kMaxMemmapRegions && k.memory.reserved_count <= kMaxReservedRanges &&
             k.memory.exact_ram_count <= kMaxReservedRanges);
  FreeMemory free;
  FUZZ_CHECK(free.add({1 << 20, 1ull << 36}).ok());
  if (!remove_reserved_memory(k, free).ok()) {
    FUZZ_CHECK(k.memory.overflow);
    return;
  }
  FreeMemory exact_ram;  // the union of exactmap's RAM ranges, which may overlap
  for (uint32_t r = 0; r < k.memory.exact_ram_count; ++r) FUZZ_CHECK(exact_ram.add(k.memory.exact_ram[r]).ok());
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range f = free.at(i);
    FUZZ_CHECK(f.end <= k.memory_limit || f.empty());
    for (uint32_t r = 0; r < k.memory.reserved_count; ++r)
      FUZZ_CHECK(k.memory.reserved[r].empty() || !k.memory.reserved[r].overlaps(f));
    if (k.memory.exactmap) FUZZ_CHECK(exact_ram.contains(f));
  }
}

void check_load_options(const uint8_t* data, size_t size) {
  std::vector<char16_t> units(size / 2);
  if (!units.empty()) std::memcpy(units.data(), data, units.size() * 2);
  char out[2048];
  std::memset(out, 0x55, sizeof(out));
  uint32_t length = utf16_command_line_to_utf8(units.data(), units.size(), out, sizeof(out));
  FUZZ_CHECK(length < sizeof(out) && out[length] == 0);
  FUZZ_CHECK(std::memchr(out, 0, length) == nullptr && std::memchr(out, '\n', length) == nullptr);
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
  std::memset(&params, 0xAA, sizeof(params));
  boot_params_from_start_info(info, map, info.nr_modules ? module : nullptr, &params);
  FUZZ_CHECK(params.e820_entries >= info.memmap_entries && params.e820_entries <= boot::kE820MaxEntries);
  FUZZ_CHECK(params.hdr.version == kPvhBootProtocol && params.hdr.type_of_loader == kPvhLoaderType);
  uint64_t initrd = params.hdr.ramdisk_image | (uint64_t{params.ext_ramdisk_image} << 32);
  uint64_t initrd_size = params.hdr.ramdisk_size | (uint64_t{params.ext_ramdisk_size} << 32);
  FUZZ_CHECK(info.nr_modules ? initrd == module->paddr && initrd_size == module->size
                             : initrd == 0 && initrd_size == 0);
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
