// fuzz_boot_env: read_boot_environment on a hostile boot_params (e820 map, command line pointer,
// initrd, setup_data chain) whose pointers lead into a small simulated low-memory area. Whatever
// the loader claims, the free memory the stub then places the kernel in must be usable RAM below
// MAXMEM (64 TiB) and above 1 MiB, and must exclude everything the loader handed over.
//
// Then the SMP layer's readers of the same memory: find_cpus from the RSDP boot_params names (or
// the MP table) lists distinct processors, at most kMaxCpus, and only reads; the trampoline page is
// a free RAM page below 0x9F000 outside boot_params, the command line and the initrd.
//
// Input: the first 4096 bytes are boot_params (zero-padded); the input is low memory at
// kParamsAddr, where boot_params sits, so the command line and setup_data can point at it; the
// bytes after boot_params are also at kMirrorBase, below the 64 KiB around boot_params that the
// trampoline page keeps off anyway, so that setup_data there tests that the page avoids it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "stub/machine/acpi_madt.h"
#include "stub/machine/boot_environment.h"
#include "fuzz/fuzz_check.h"
#include "tests/support/simulated_memory.h"
#include "stub/machine/trampoline_page.h"

using namespace kpack;
using kpack::test::SimulatedMemory;

namespace {

constexpr uint64_t kParamsAddr = 0x90000;  // where classic loaders put boot_params and the command line
constexpr uint64_t kInputSize = 0x10000;
constexpr uint64_t kMirrorBase = 0x71000;  // the mirror ends where that window begins: 0x80000
constexpr uint64_t kLowBase = kMirrorBase, kLowSize = kParamsAddr + kInputSize - kMirrorBase;

// Sorted, merged union of the map's RAM entries: where free memory may lie.
std::vector<Range> ram_of(const boot::BootParams& p) {
  std::vector<Range> ram;
  for (uint32_t i = 0; i < p.e820_entries && i < boot::kE820MaxEntries; ++i)
    if (p.e820_table[i].type == boot::kE820Ram) ram.push_back(range_of(p.e820_table[i].addr, p.e820_table[i].size));
  std::sort(ram.begin(), ram.end(), [](Range a, Range b) { return a.begin < b.begin; });
  std::vector<Range> merged;
  for (Range r : ram) {
    if (r.empty()) continue;
    if (!merged.empty() && r.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  return merged;
}

// Everything that must never be free: reserved map entries, boot_params, the command line, the
// initrd and each setup_data node (found by walking the chain again, independently).
std::vector<Range> live_ranges(const boot::BootParams& p, const BootEnvironment& env, SimulatedMemory& memory) {
  std::vector<Range> live{range_of(kParamsAddr, sizeof(boot::BootParams)), env.command_line, env.initrd};
  for (uint32_t i = 0; i < p.e820_entries && i < boot::kE820MaxEntries; ++i)
    if (p.e820_table[i].type != boot::kE820Ram) live.push_back(range_of(p.e820_table[i].addr, p.e820_table[i].size));
  uint64_t node = p.hdr.setup_data;
  for (uint32_t n = 0; node && n < env.setup_data_nodes; ++n) {
    const uint8_t* bytes = memory.readable(node, sizeof(boot::SetupData));
    FUZZ_CHECK(bytes);
    const auto& header = *reinterpret_cast<const boot::SetupData*>(bytes);
    live.push_back(range_of(node, sizeof(boot::SetupData) + uint64_t{header.len}));
    if (header.type == boot::kSetupIndirect && header.len >= sizeof(boot::SetupIndirect)) {
      const uint8_t* body = memory.readable(node + sizeof(boot::SetupData), sizeof(boot::SetupIndirect));
      FUZZ_CHECK(body);
      const auto& indirect = *reinterpret_cast<const boot::SetupIndirect*>(body);
      live.push_back(range_of(indirect.addr, indirect.len));
    }
    node = header.next;
  }
  const boot::EfiInfo& efi = p.efi_info;
  if (efi.efi_loader_signature == boot::kEfiLoaderSignature64 && efi.efi_memmap_size)
    live.push_back(range_of(efi.efi_memmap | (uint64_t{efi.efi_memmap_hi} << 32), efi.efi_memmap_size));
  return live;
}

void check_free(const FreeMemory& free, const std::vector<Range>& ram, const std::vector<Range>& live) {
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range f = free.at(i);
    FUZZ_CHECK(!f.empty() && f.begin >= kLowestUsable && f.end <= kMaxPhysicalAddress);
    // Not necessarily page-aligned: a reserved entry may cut RAM anywhere; fits align themselves.
    if (i > 0) FUZZ_CHECK(free.at(i - 1).end < f.begin);  // sorted, disjoint, not adjacent
    FUZZ_CHECK(std::any_of(ram.begin(), ram.end(), [&](Range r) { return r.contains(f); }));
    for (Range l : live) FUZZ_CHECK(l.empty() || !l.overlaps(f));  // overlaps() takes ranges as non-empty
  }
}

void check_smp_readers(const boot::BootParams& params, const BootEnvironment& env, SimulatedMemory& memory) {
  CpuList cpus;
  StubStatus status = find_cpus(memory, params.acpi_rsdp_addr, &cpus);
  FUZZ_CHECK(memory.granted().empty());
  if (status.ok()) {
    FUZZ_CHECK(cpus.count <= kMaxCpus && cpus.source != CpuTable::kNone);
    for (uint32_t i = 0; i < cpus.count; ++i) FUZZ_CHECK(cpu_index_of(cpus, cpus.apic_id[i]) == int32_t(i));
  } else {
    FUZZ_CHECK(status.message && status.message[0]);
  }
  Range image{0x100000, 0x200000};
  uint64_t page;
  if (!find_trampoline_page(params, kParamsAddr, env, image, &page)) return;
  Range p = range_of(page, kTrampolinePageSize);
  FUZZ_CHECK(page % kTrampolinePageSize == 0 && page >= kTrampolineFloor && p.end <= kTrampolineCeiling);
  std::vector<Range> ram = ram_of(params);
  FUZZ_CHECK(std::any_of(ram.begin(), ram.end(), [&](Range r) { return r.contains(p); }));
  for (Range l : live_ranges(params, env, memory)) FUZZ_CHECK(l.empty() || !l.overlaps(p));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boot::BootParams params{};
  std::memcpy(&params, data, std::min(size, sizeof(params)));
  SimulatedMemory memory(kLowBase, kLowSize);
  std::vector<uint8_t> low(data, data + std::min<size_t>(size, kInputSize));
  if (low.size() < sizeof(params)) low.resize(sizeof(params));
  memory.load(kParamsAddr, low);
  if (low.size() > sizeof(params))
    memory.load(kMirrorBase, std::vector<uint8_t>(low.begin() + sizeof(params), low.end()));

  BootEnvironment env;
  StubStatus status = read_boot_environment(params, kParamsAddr, memory, &env);
  FUZZ_CHECK(memory.granted().empty());  // it only reads
  if (!status.ok()) {
    FUZZ_CHECK(status.message && status.message[0]);
    return 0;
  }
  if (!env.command_line.empty()) {
    // The text is readable and NUL-free; the range's last byte is its NUL, or one past
    // cmdline_size when the loader left it unterminated (the kernel then cuts it there too).
    uint64_t length = env.command_line.size() - 1;
    const uint8_t* text = memory.readable(env.command_line.begin, length);
    FUZZ_CHECK(text && std::memchr(text, 0, length) == nullptr);
    (void)command_line_has(reinterpret_cast<const char*>(text), length, "kpack.debug");
  }
  check_free(env.free, ram_of(params), live_ranges(params, env, memory));
  check_smp_readers(params, env, memory);
  return 0;
}
