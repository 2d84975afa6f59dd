#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stub/machine/acpi_madt.h"
#include "stub/machine/acpi_rsdp.h"
#include "tests/support/simulated_memory.h"

using namespace kpack;
using kpack::test::SimulatedMemory;

namespace {

constexpr uint64_t kRsdpAt = 0xF5A00, kXsdtAt = 0x80000, kRsdtAt = 0x80400, kMadtAt = 0x81000, kFacpAt = 0x82000;

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}

uint8_t checksum_of(const std::vector<uint8_t>& b, size_t begin, size_t end) {
  uint8_t sum = 0;
  for (size_t i = begin; i < end; ++i) sum = uint8_t(sum + b[i]);
  return uint8_t(-sum);
}

// An ACPI table: header with `signature`, `revision`, the body, length and checksum filled in.
std::vector<uint8_t> table(const char* signature, uint8_t revision, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> t(36, 0);
  std::memcpy(t.data(), signature, 4);
  t[8] = revision;
  t.insert(t.end(), body.begin(), body.end());
  put32(t, 4, uint32_t(t.size()));
  t[9] = checksum_of(t, 0, t.size());
  return t;
}

std::vector<uint8_t> rsdp(uint8_t revision, uint32_t rsdt, uint64_t xsdt) {
  std::vector<uint8_t> r(36, 0);
  std::memcpy(r.data(), "RSD PTR ", 8);
  r[15] = revision;
  put32(r, 16, rsdt);
  put32(r, 20, 36);
  put64(r, 24, xsdt);
  r[8] = checksum_of(r, 0, 20);
  r[32] = checksum_of(r, 0, 36);
  return r;
}

std::vector<uint8_t> local_apic(uint8_t uid, uint8_t id, uint32_t flags) {
  std::vector<uint8_t> e{0, 8, uid, id, 0, 0, 0, 0};
  put32(e, 4, flags);
  return e;
}
std::vector<uint8_t> local_x2apic(uint32_t id, uint32_t flags) {
  std::vector<uint8_t> e(16, 0);
  e[0] = 9;
  e[1] = 16;
  put32(e, 4, id);
  put32(e, 8, flags);
  return e;
}
std::vector<uint8_t> io_apic() { return {1, 12, 0, 0, 0, 0, 0xC0, 0xFE, 0, 0, 0, 0}; }
std::vector<uint8_t> apic_override(uint64_t address) {
  std::vector<uint8_t> e(12, 0);
  e[0] = 5;
  e[1] = 12;
  put64(e, 4, address);
  return e;
}

std::vector<uint8_t> madt(uint8_t revision, const std::vector<std::vector<uint8_t>>& entries,
                          uint32_t apic = 0xFEE00000) {
  std::vector<uint8_t> body(8, 0);
  put32(body, 0, apic);
  put32(body, 4, 1);  // PCAT_COMPAT
  for (const auto& e : entries) body.insert(body.end(), e.begin(), e.end());
  return table("APIC", revision, body);
}

std::vector<uint8_t> xsdt(std::vector<uint64_t> entries) {
  std::vector<uint8_t> body(entries.size() * 8);
  for (size_t i = 0; i < entries.size(); ++i) put64(body, i * 8, entries[i]);
  return table("XSDT", 1, body);
}
std::vector<uint8_t> rsdt(std::vector<uint32_t> entries) {
  std::vector<uint8_t> body(entries.size() * 4);
  for (size_t i = 0; i < entries.size(); ++i) put32(body, i * 4, entries[i]);
  return table("RSDT", 1, body);
}

// The first MiB, zeroed, with a FACP and an ACPI 2.0 RSDP -> XSDT -> (FACP, MADT).
SimulatedMemory acpi_machine(const std::vector<uint8_t>& the_madt) {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  memory.load(kRsdpAt, rsdp(2, kRsdtAt, kXsdtAt));
  memory.load(kXsdtAt, xsdt({kFacpAt, kMadtAt}));
  memory.load(kRsdtAt, rsdt({kFacpAt, kMadtAt}));
  memory.load(kFacpAt, table("FACP", 6, std::vector<uint8_t>(64, 0)));
  memory.load(kMadtAt, the_madt);
  return memory;
}

std::vector<uint32_t> ids(const CpuList& list) { return {list.apic_id, list.apic_id + list.count}; }

// MP table pieces (MP specification 1.4, 4).
std::vector<uint8_t> mp_floating(uint32_t config, uint8_t feature1 = 0) {
  std::vector<uint8_t> f(16, 0);
  std::memcpy(f.data(), "_MP_", 4);
  put32(f, 4, config);
  f[8] = 1;
  f[9] = 4;
  f[11] = feature1;
  f[10] = checksum_of(f, 0, 16);
  return f;
}
std::vector<uint8_t> mp_processor(uint8_t id, uint8_t flags) {
  std::vector<uint8_t> e(20, 0);
  e[1] = id;
  e[2] = 0x14;
  e[3] = flags;
  return e;
}
std::vector<uint8_t> mp_config(const std::vector<std::vector<uint8_t>>& entries, uint32_t apic = 0xFEE00000) {
  std::vector<uint8_t> t(44, 0);
  std::memcpy(t.data(), "PCMP", 4);
  t[6] = 4;
  put32(t, 36, apic);
  for (const auto& e : entries) t.insert(t.end(), e.begin(), e.end());
  t[4] = uint8_t(t.size());
  t[5] = uint8_t(t.size() >> 8);
  t[34] = uint8_t(entries.size());
  t[7] = checksum_of(t, 0, t.size());
  return t;
}

}  // namespace

TEST_CASE("find_cpus lists the MADT's enabled processors in table order, with the local APIC address") {
  SimulatedMemory memory =
      acpi_machine(madt(5,
                        {local_apic(0, 0, 1), io_apic(), local_apic(1, 2, 1), local_apic(2, 1, 0) /* disabled */,
                         local_apic(3, 5, 2) /* online capable */, local_apic(4, 0xFF, 1) /* no processor */},
                        0xFEE00000));
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(list.source == CpuTable::kMadt);
  CHECK(ids(list) == std::vector<uint32_t>{0, 2, 5});
  CHECK(list.dropped == 0);
  CHECK(list.local_apic_address == 0xFEE00000);
  CHECK(cpu_index_of(list, 2) == 1);
  CHECK(cpu_index_of(list, 1) == -1);
}

TEST_CASE("find_cpus: Online Capable counts only from MADT revision 5") {
  SimulatedMemory memory = acpi_machine(madt(4, {local_apic(0, 0, 1), local_apic(1, 1, 2)}));
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(ids(list) == std::vector<uint32_t>{0});
}

TEST_CASE("find_cpus takes x2APIC entries, drops duplicates of type 0 entries, and applies the address override") {
  SimulatedMemory memory =
      acpi_machine(madt(5, {local_apic(0, 0, 1), local_x2apic(0, 1), local_x2apic(300, 1), local_x2apic(301, 0),
                            local_x2apic(0xFFFFFFFF, 1), apic_override(0x1'2345'6000)}));
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(ids(list) == std::vector<uint32_t>{0, 300});
  CHECK(list.local_apic_address == 0x1'2345'6000);
}

TEST_CASE("find_cpus reads the RSDT when the RSDP is ACPI 1.0") {
  SimulatedMemory memory = acpi_machine(madt(3, {local_apic(0, 3, 1), local_apic(1, 7, 1)}));
  memory.load(kRsdpAt, rsdp(0, kRsdtAt, 0));
  memory.load(kXsdtAt, std::vector<uint8_t>(64, 0));  // no XSDT: only the RSDT can lead to the MADT
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(ids(list) == std::vector<uint32_t>{3, 7});
}

TEST_CASE("find_cpus lists at most kMaxCpus processors and counts the rest") {
  std::vector<std::vector<uint8_t>> entries;
  for (uint32_t id = 0; id < kMaxCpus + 6; ++id) entries.push_back(local_x2apic(id, 1));
  SimulatedMemory memory = acpi_machine(madt(5, entries));
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(list.count == kMaxCpus);
  CHECK(list.dropped == 6);
  CHECK(list.apic_id[kMaxCpus - 1] == kMaxCpus - 1);
}

TEST_CASE("find_cpus refuses bad checksums, bad lengths and truncated entries") {
  CpuList list;
  SUBCASE("MADT checksum") {
    auto m = madt(5, {local_apic(0, 0, 1), local_apic(1, 1, 1)});
    m[9] ^= 1;
    SimulatedMemory memory = acpi_machine(m);
    StubStatus s = find_cpus(memory, kRsdpAt, &list);
    CHECK(std::string(s.message ? s.message : "") == "bad ACPI table (address, length)");
    CHECK(s.a == kMadtAt);
  }
  SUBCASE("XSDT checksum") {
    SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1)}));
    auto x = xsdt({kFacpAt, kMadtAt});
    x[40] ^= 0x10;
    memory.load(kXsdtAt, x);
    StubStatus s = find_cpus(memory, kRsdpAt, &list);
    CHECK_FALSE(s.ok());
    CHECK(s.a == kXsdtAt);
  }
  SUBCASE("RSDP checksum") {
    SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1)}));
    auto r = rsdp(2, kRsdtAt, kXsdtAt);
    r[30] ^= 1;  // only the extended checksum covers this byte
    memory.load(kRsdpAt, r);
    CHECK_FALSE(find_cpus(memory, kRsdpAt, &list).ok());
  }
  SUBCASE("MADT length past the end of memory") {
    auto m = madt(5, {local_apic(0, 0, 1)});
    put32(m, 4, 0x100000);
    SimulatedMemory memory = acpi_machine(m);
    StubStatus s = find_cpus(memory, kRsdpAt, &list);
    CHECK_FALSE(s.ok());
    CHECK(s.b == 0x100000);
  }
  SUBCASE("MADT shorter than its fixed fields") {
    std::vector<uint8_t> m = table("APIC", 5, {0, 0, 0xE0, 0xFE});
    SimulatedMemory memory = acpi_machine(m);
    StubStatus s = find_cpus(memory, kRsdpAt, &list);
    CHECK_FALSE(s.ok());
    CHECK(s.b == 40);
  }
  SUBCASE("an entry running past the table") {
    auto entry = local_x2apic(5, 1);
    entry.resize(12);  // its length byte still says 16
    SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1), entry}));
    StubStatus s = find_cpus(memory, kRsdpAt, &list);
    CHECK(std::string(s.message ? s.message : "") == "bad MADT entry (table, offset)");
    CHECK(s.b == 52);
  }
  SUBCASE("a zero-length entry (would loop forever)") {
    SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1), {0x7F, 0, 0, 0}}));
    CHECK_FALSE(find_cpus(memory, kRsdpAt, &list).ok());
  }
  SUBCASE("a type 0 entry too short for its fields") {
    SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1), {0, 4, 1, 1}}));
    CHECK_FALSE(find_cpus(memory, kRsdpAt, &list).ok());
  }
}

TEST_CASE("find_cpus falls back to the MP table without ACPI: enabled processor entries only") {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  memory.load(0xF5B00, mp_floating(0xF5C00));
  memory.load(0xF5C00, mp_config({mp_processor(0, 3),
                                  mp_processor(1, 1),
                                  mp_processor(2, 0),
                                  {1, 0, 0x14, 0, 'P', 'C', 'I', ' '} /* bus */,
                                  mp_processor(4, 1)},
                                 0xFEE00000));
  CpuList list;
  REQUIRE(find_cpus(memory, 0, &list).ok());
  CHECK(list.source == CpuTable::kMpTable);
  CHECK(ids(list) == std::vector<uint32_t>{0, 1, 4});
  CHECK(list.local_apic_address == 0xFEE00000);
}

TEST_CASE("find_cpus finds the MP floating pointer in the EBDA and the last KiB of base memory") {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  memory.load(0x9F000, mp_config({mp_processor(0, 3), mp_processor(6, 1)}));
  SUBCASE("EBDA") {
    memory.load(kEbdaSegmentPointer, {0xC0, 0x9F});
    memory.load(0x9FC40, mp_floating(0x9F000));
  }
  SUBCASE("last KiB of base memory (no EBDA pointer)") {
    memory.load(kBaseMemoryKiBPointer, {0x7F, 0x02});  // 639 KiB
    memory.load(0x9F800, mp_floating(0x9F000));
  }
  CpuList list;
  REQUIRE(find_cpus(memory, 0, &list).ok());
  CHECK(ids(list) == std::vector<uint32_t>{0, 6});
}

TEST_CASE("find_cpus: an MP default configuration is two processors, APIC IDs 0 and 1") {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  memory.load(0xF0010, mp_floating(0, 5));
  CpuList list;
  REQUIRE(find_cpus(memory, 0, &list).ok());
  CHECK(ids(list) == std::vector<uint32_t>{0, 1});
  CHECK(list.local_apic_address == kDefaultLocalApicAddress);
}

TEST_CASE("find_cpus: a bad MP table is an error; no table at all is one too") {
  SimulatedMemory memory(0, 0x100000);
  memory.load(0, std::vector<uint8_t>(0x100000, 0));
  CpuList list;
  CHECK(std::string(find_cpus(memory, 0, &list).message) == "no ACPI MADT and no MP table");
  auto config = mp_config({mp_processor(0, 3), mp_processor(1, 1)});
  SUBCASE("checksum") { config[7] ^= 1; }
  SUBCASE("an entry count past the table's length") {
    config[34] = 3;
    config[7] = 0;
    config[7] = checksum_of(config, 0, config.size());
  }
  SUBCASE("an unknown entry type") {
    config[44 + 20] = 9;
    config[7] = 0;
    config[7] = checksum_of(config, 0, config.size());
  }
  memory.load(0xF5B00, mp_floating(0xF5C00));
  memory.load(0xF5C00, config);
  StubStatus s = find_cpus(memory, 0, &list);
  CHECK(std::string(s.message ? s.message : "") == "bad MP table (address, entry)");
  CHECK(s.a == 0xF5C00);
}

TEST_CASE("find_cpus: an RSDP whose tables hold no MADT falls back to the MP table") {
  SimulatedMemory memory = acpi_machine(madt(5, {local_apic(0, 0, 1)}));
  memory.load(kXsdtAt, xsdt({kFacpAt}));
  memory.load(0xF5B00, mp_floating(0xF5C00));
  memory.load(0xF5C00, mp_config({mp_processor(0, 3), mp_processor(1, 1)}));
  CpuList list;
  REQUIRE(find_cpus(memory, kRsdpAt, &list).ok());
  CHECK(list.source == CpuTable::kMpTable);
  CHECK(ids(list) == std::vector<uint32_t>{0, 1});
}

TEST_CASE("which listed CPUs the boot CPU starts: not itself, not disable_cpu_apicid's, none xAPIC cannot name") {
  CpuList cpus;
  for (uint32_t id : {0u, 1u, 2u, 3u, 0xFEu, 0xFFu, 0x100u, 0x1FFu}) cpus.apic_id[cpus.count++] = id;
  auto start = [&](CpuStartRules rules) {
    uint32_t ids[kMaxCpus] = {};
    uint32_t n = cpus_to_start(cpus, rules, ids);
    return std::vector<uint32_t>(ids, ids + n);
  };
  using Ids = std::vector<uint32_t>;
  // xAPIC: an 8-bit destination, 0xFF the broadcast; 0x100 would be CPU 0, 0x1FF everyone.
  CHECK(start({0, 64, -1, false}) == Ids{1, 2, 3, 0xFE});
  // x2APIC: 32-bit destinations, every listed CPU.
  CHECK(start({0, 64, -1, true}) == Ids{1, 2, 3, 0xFE, 0xFF, 0x100, 0x1FF});
  // A crash kernel on CPU 2 with disable_cpu_apicid=0: the old boot CPU is never touched.
  CHECK(start({2, 64, 0, false}) == Ids{1, 3, 0xFE});
  // max_cpus counts the boot CPU: 3 starts two, 1 none.
  CHECK(start({0, 3, -1, false}) == Ids{1, 2});
  CHECK(start({0, 1, -1, false}).empty());
}
