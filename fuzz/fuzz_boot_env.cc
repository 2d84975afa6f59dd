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
#include "fuzz/self_test.h"
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

// The free ranges in order.
std::vector<Range> ranges_of(const FreeMemory& free) {
  std::vector<Range> ranges;
  for (uint32_t i = 0; i < free.count(); ++i) ranges.push_back(free.at(i));
  return ranges;
}

void check_free(const std::vector<Range>& free, const std::vector<Range>& ram, const std::vector<Range>& live) {
  for (size_t i = 0; i < free.size(); ++i) {
    Range f = free[i];
    FUZZ_CHECK(!f.empty() && f.begin >= kLowestUsable && f.end <= kMaxPhysicalAddress);
    // Not necessarily page-aligned: a reserved entry may cut RAM anywhere; fits align themselves.
    if (i > 0) FUZZ_CHECK(free[i - 1].end < f.begin);  // sorted, disjoint, not adjacent
    FUZZ_CHECK(std::any_of(ram.begin(), ram.end(), [&](Range r) { return r.contains(f); }));
    for (Range l : live) FUZZ_CHECK(l.empty() || !l.overlaps(f));  // overlaps() takes ranges as non-empty
  }
}

// The readers of what the loader and firmware hand over only read.
void check_only_read(const SimulatedMemory& memory) { FUZZ_CHECK(memory.granted().empty()); }

// A refusal says why.
void check_refused(const StubStatus& status) { FUZZ_CHECK(status.message && status.message[0]); }

// Distinct processors, at most kMaxCpus, from a table that was found.
void check_cpus(const CpuList& cpus) {
  FUZZ_CHECK(cpus.count <= kMaxCpus && cpus.source != CpuTable::kNone);
  for (uint32_t i = 0; i < cpus.count; ++i) FUZZ_CHECK(cpu_index_of(cpus, cpus.apic_id[i]) == int32_t(i));
}

// The trampoline page: aligned, in its window, in RAM, and off everything the loader handed over.
void check_trampoline(uint64_t page, const std::vector<Range>& ram, const std::vector<Range>& live) {
  Range p = range_of(page, kTrampolinePageSize);
  FUZZ_CHECK(page % kTrampolinePageSize == 0 && page >= kTrampolineFloor && p.end <= kTrampolineCeiling);
  FUZZ_CHECK(std::any_of(ram.begin(), ram.end(), [&](Range r) { return r.contains(p); }));
  for (Range l : live) FUZZ_CHECK(l.empty() || !l.overlaps(p));
}

// The command line is readable and NUL-free; the range's last byte is its NUL, or one past
// cmdline_size when the loader left it unterminated (the kernel then cuts it there too).
void check_command_line(const BootEnvironment& env, SimulatedMemory& memory) {
  if (env.command_line.empty()) return;
  uint64_t length = env.command_line.size() - 1;
  const uint8_t* text = memory.readable(env.command_line.begin, length);
  FUZZ_CHECK(text && std::memchr(text, 0, length) == nullptr);
  (void)command_line_has(reinterpret_cast<const char*>(text), length, "kpack.debug");
}

void check_smp_readers(const boot::BootParams& params, const BootEnvironment& env, SimulatedMemory& memory) {
  CpuList cpus;
  StubStatus status = find_cpus(memory, params.acpi_rsdp_addr, &cpus);
  check_only_read(memory);
  if (status.ok())
    check_cpus(cpus);
  else
    check_refused(status);
  Range image{0x100000, 0x200000};
  uint64_t page;
  if (find_trampoline_page(params, kParamsAddr, env, image, &page))
    check_trampoline(page, ram_of(params), live_ranges(params, env, memory));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boot::BootParams params{};
  std::memcpy(&params, data, std::min(size, sizeof(params)));
  static SimulatedMemory memory(kLowBase, kLowSize);
  memory.reset();
  std::vector<uint8_t> low(data, data + std::min<size_t>(size, kInputSize));
  if (low.size() < sizeof(params)) low.resize(sizeof(params));
  memory.load(kParamsAddr, low);
  if (low.size() > sizeof(params))
    memory.load(kMirrorBase, std::vector<uint8_t>(low.begin() + sizeof(params), low.end()));

  BootEnvironment env;
  StubStatus status = read_boot_environment(params, kParamsAddr, memory, &env);
  check_only_read(memory);
  if (!status.ok()) return check_refused(status), 0;
  check_command_line(env, memory);
  check_free(ranges_of(env.free), ram_of(params), live_ranges(params, env, memory));
  check_smp_readers(params, env, memory);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above with a spoiled environment, memory or result.
namespace {

constexpr uint64_t kMiB = 1 << 20;

// Low memory holding the header of a setup_data node at `node`.
SimulatedMemory memory_with_node(uint64_t node, uint32_t type, uint32_t len) {
  SimulatedMemory memory(kLowBase, kLowSize);
  boot::SetupData header{};
  header.type = type;
  header.len = len;
  std::vector<uint8_t> bytes(sizeof(header));
  std::memcpy(bytes.data(), &header, sizeof(header));
  memory.load(node, bytes);
  return memory;
}

void spoil_live(uint64_t node, uint32_t type, uint32_t len) {
  SimulatedMemory memory = memory_with_node(kLowBase + 0x1000, type, len);
  boot::BootParams params{};
  params.hdr.setup_data = node;
  BootEnvironment env;
  env.setup_data_nodes = 1;
  (void)live_ranges(params, env, memory);
}

}  // namespace

FUZZ_SPOIL("a setup_data node counted but unreadable") { spoil_live(0x10, boot::kSetupIndirect, 0); }
FUZZ_SPOIL("an indirect node whose body is unreadable") {
  // The node's header is the last bytes of low memory: the SetupIndirect after it lies outside.
  uint64_t node = kLowBase + kLowSize - sizeof(boot::SetupData);
  SimulatedMemory memory = memory_with_node(node, boot::kSetupIndirect, sizeof(boot::SetupIndirect));
  boot::BootParams params{};
  params.hdr.setup_data = node;
  BootEnvironment env;
  env.setup_data_nodes = 1;
  (void)live_ranges(params, env, memory);
}
FUZZ_SPOIL("free memory below 1 MiB") { check_free({{0x1000, 0x2000}}, {{0, 2 * kMiB}}, {}); }
FUZZ_SPOIL("free ranges that touch") { check_free({{kMiB, 2 * kMiB}, {2 * kMiB, 3 * kMiB}}, {{0, 4 * kMiB}}, {}); }
FUZZ_SPOIL("free memory outside RAM") { check_free({{kMiB, 2 * kMiB}}, {}, {}); }
FUZZ_SPOIL("free memory over the initrd") {
  check_free({{kMiB, 2 * kMiB}}, {{0, 4 * kMiB}}, {{kMiB + 0x1000, kMiB + 0x2000}});
}
FUZZ_SPOIL("a reader that asked to write") {
  SimulatedMemory memory(kLowBase, kLowSize);
  (void)memory.writable(kParamsAddr, 16);
  check_only_read(memory);
}
FUZZ_SPOIL("a refusal without a reason") { check_refused(StubStatus{""}); }
FUZZ_SPOIL("more processors than the stub lists") {
  CpuList cpus;
  cpus.source = CpuTable::kMadt;
  cpus.count = kMaxCpus + 1;
  check_cpus(cpus);
}
FUZZ_SPOIL("a processor listed twice") {
  CpuList cpus;
  cpus.source = CpuTable::kMadt;
  cpus.count = 2;
  cpus.apic_id[0] = cpus.apic_id[1] = 1;
  check_cpus(cpus);
}
FUZZ_SPOIL("a trampoline page off its alignment") { check_trampoline(0x1800, {{0, 0x9F000}}, {}); }
FUZZ_SPOIL("a trampoline page outside RAM") { check_trampoline(0x1000, {}, {}); }
FUZZ_SPOIL("a trampoline page over boot_params") {
  check_trampoline(kParamsAddr, {{0, 0x9F000}}, {range_of(kParamsAddr, sizeof(boot::BootParams))});
}
FUZZ_SPOIL("a command line with a NUL inside") {
  SimulatedMemory memory(kLowBase, kLowSize);
  memory.load(kParamsAddr, std::vector<uint8_t>{'a', 0, 'b', 0});
  BootEnvironment env;
  env.command_line = range_of(kParamsAddr, 4);
  check_command_line(env, memory);
}
#endif
