#include "stub/machine/acpi_madt.h"

#include "stub/machine/acpi_rsdp.h"
#include "formats/le.h"

namespace kpack {
namespace {

// ACPI 6.5, 5.2.5.3 (RSDP), 5.2.6 (table header), 5.2.12 (MADT).
constexpr uint64_t kRsdpRevision = 15, kRsdpRsdt = 16, kRsdpLength = 20, kRsdpXsdt = 24;
constexpr uint64_t kRsdpV1Size = 20, kRsdpV2Size = 36;
constexpr uint64_t kHeaderSize = 36, kHeaderLength = 4, kHeaderRevision = 8;
constexpr uint64_t kMadtLocalApic = 36, kMadtEntries = 44;
constexpr uint8_t kMadtTypeLocalApic = 0, kMadtTypeApicOverride = 5, kMadtTypeLocalX2Apic = 9;
constexpr uint32_t kMadtEnabled = 1, kMadtOnlineCapable = 2;
constexpr uint8_t kMadtOnlineCapableRevision = 5;
// Tables larger than this are taken for garbage: a MADT for kMaxCpus is a few KiB, and a 1 MiB
// window keeps a corrupt length from mapping the address space.
constexpr uint32_t kMaxTableSize = 1 << 20;

// MP specification 1.4, 4.1 (floating pointer) and 4.2-4.3 (configuration table).
constexpr uint64_t kMpFloatingSize = 16, kMpFloatingConfig = 4, kMpFloatingLength = 8, kMpFeature1 = 11;
constexpr uint64_t kMpHeaderSize = 44, kMpBaseLength = 4, kMpEntryCount = 34, kMpLocalApic = 36;
constexpr uint8_t kMpProcessor = 0, kMpProcessorSize = 20, kMpOtherSize = 8, kMpLastType = 4;
constexpr uint8_t kMpProcessorEnabled = 1;

bool sums_to_zero(const uint8_t* bytes, uint64_t length) {
  uint8_t sum = 0;
  for (uint64_t i = 0; i < length; ++i) sum = static_cast<uint8_t>(sum + bytes[i]);
  return sum == 0;
}

bool has_signature(const uint8_t* at, const char* signature) {
  for (int i = 0; signature[i]; ++i)
    if (at[i] != static_cast<uint8_t>(signature[i])) return false;
  return true;
}

void add_cpu(CpuList& list, uint32_t apic_id) {
  // Firmware may describe a processor in both a type 0 and a type 9 entry.
  if (cpu_index_of(list, apic_id) >= 0) return;
  if (list.count == kMaxCpus) {
    ++list.dropped;
    return;
  }
  list.apic_id[list.count++] = apic_id;
}

// A checked ACPI table: its whole length readable, at least the header, checksum zero.
StubStatus read_table(PhysicalMemory& memory, uint64_t address, const uint8_t** table, uint32_t* length) {
  const uint8_t* header = memory.readable(address, kHeaderSize);
  if (!header) return fail("bad ACPI table (address, length)", address);
  uint32_t size = load_le<uint32_t>(header + kHeaderLength);
  if (size < kHeaderSize || size > kMaxTableSize) return fail("bad ACPI table (address, length)", address, size);
  const uint8_t* bytes = memory.readable(address, size);
  if (!bytes) return fail("bad ACPI table (address, length)", address, size);
  if (!sums_to_zero(bytes, size)) return fail("bad ACPI table (address, length)", address, size);
  *table = bytes;
  *length = size;
  return StubStatus::success();
}

// The MADT's address from the XSDT (8-byte entries) or the RSDT (4-byte entries), or 0.
StubStatus find_madt(PhysicalMemory& memory, uint64_t rsdp_address, uint64_t* madt) {
  const uint8_t* rsdp = memory.readable(rsdp_address, kRsdpV1Size);
  if (!rsdp || !has_signature(rsdp, "RSD PTR ") || !sums_to_zero(rsdp, kRsdpV1Size))
    return fail("bad ACPI table (address, length)", rsdp_address);
  uint64_t root = load_le<uint32_t>(rsdp + kRsdpRsdt);
  uint64_t entry_size = 4;
  const char* root_signature = "RSDT";
  if (rsdp[kRsdpRevision] >= 2) {
    const uint8_t* v2 = memory.readable(rsdp_address, kRsdpV2Size);
    if (!v2 || load_le<uint32_t>(v2 + kRsdpLength) < kRsdpV2Size || !sums_to_zero(v2, kRsdpV2Size))
      return fail("bad ACPI table (address, length)", rsdp_address);
    if (uint64_t xsdt = load_le<uint64_t>(v2 + kRsdpXsdt)) {
      root = xsdt;
      entry_size = 8;
      root_signature = "XSDT";
    }
  }
  const uint8_t* table;
  uint32_t length;
  KPACK_TRY(read_table(memory, root, &table, &length));
  if (!has_signature(table, root_signature)) return fail("bad ACPI table (address, length)", root, length);
  *madt = 0;
  for (uint64_t at = kHeaderSize; at + entry_size <= length; at += entry_size) {
    uint64_t address = entry_size == 8 ? load_le<uint64_t>(table + at) : load_le<uint32_t>(table + at);
    const uint8_t* header = memory.readable(address, 4);
    if (header && has_signature(header, "APIC")) {
      *madt = address;
      break;
    }
  }
  return StubStatus::success();
}

StubStatus read_madt(PhysicalMemory& memory, uint64_t address, CpuList* out) {
  const uint8_t* table;
  uint32_t length;
  KPACK_TRY(read_table(memory, address, &table, &length));
  if (length < kMadtEntries) return fail("bad ACPI table (address, length)", address, length);
  CpuList list;
  list.source = CpuTable::kMadt;
  list.local_apic_address = load_le<uint32_t>(table + kMadtLocalApic);
  uint32_t usable = kMadtEnabled | (table[kHeaderRevision] >= kMadtOnlineCapableRevision ? kMadtOnlineCapable : 0);
  for (uint64_t at = kMadtEntries; at < length;) {
    if (length - at < 2) return fail("bad MADT entry (table, offset)", address, at);
    uint8_t type = table[at], size = table[at + 1];
    if (size < 2 || size > length - at) return fail("bad MADT entry (table, offset)", address, at);
    const uint8_t* entry = table + at;
    if (type == kMadtTypeLocalApic && size >= 8) {
      // An APIC ID of 0xFF is no processor (ACPI leaves type 0 to IDs below 255).
      if ((load_le<uint32_t>(entry + 4) & usable) && entry[3] != 0xFF) add_cpu(list, entry[3]);
    } else if (type == kMadtTypeLocalX2Apic && size >= 16) {
      uint32_t id = load_le<uint32_t>(entry + 4);
      if ((load_le<uint32_t>(entry + 8) & usable) && id != 0xFFFFFFFF) add_cpu(list, id);
    } else if (type == kMadtTypeApicOverride && size >= 12) {
      list.local_apic_address = load_le<uint64_t>(entry + 4);
    } else if (type == kMadtTypeLocalApic || type == kMadtTypeLocalX2Apic || type == kMadtTypeApicOverride) {
      return fail("bad MADT entry (table, offset)", address, at);
    }
    at += size;
  }
  *out = list;
  return StubStatus::success();
}

// The floating pointer's address in [start, start + size) on a 16-byte boundary, or 0.
uint64_t scan_mp(PhysicalMemory& memory, uint64_t start, uint64_t size) {
  const uint8_t* window = memory.readable(start, size);
  if (!window) return 0;
  for (uint64_t at = 0; at + kMpFloatingSize <= size; at += 16) {
    const uint8_t* p = window + at;
    if (has_signature(p, "_MP_") && p[kMpFloatingLength] == 1 && sums_to_zero(p, kMpFloatingSize)) return start + at;
  }
  return 0;
}

// MP 1.4, 4: the first KiB of the EBDA, the last KiB of base memory, then the BIOS ROM.
uint64_t find_mp_floating(PhysicalMemory& memory) {
  if (const uint8_t* ebda = memory.readable(kEbdaSegmentPointer, 2)) {
    uint64_t base = uint64_t{load_le<uint16_t>(ebda)} << 4;
    if (base > 0x400)
      if (uint64_t found = scan_mp(memory, base, 1024)) return found;
  }
  if (const uint8_t* kib = memory.readable(kBaseMemoryKiBPointer, 2)) {
    uint64_t top = uint64_t{load_le<uint16_t>(kib)} << 10;
    if (top >= 2048 && top <= 0xA0000)
      if (uint64_t found = scan_mp(memory, top - 1024, 1024)) return found;
  }
  return scan_mp(memory, kMpBiosWindow, kMpBiosWindowSize);
}

StubStatus read_mp_table(PhysicalMemory& memory, uint64_t floating, CpuList* out) {
  const uint8_t* pointer = memory.readable(floating, kMpFloatingSize);
  uint64_t address = load_le<uint32_t>(pointer + kMpFloatingConfig);
  CpuList list;
  list.source = CpuTable::kMpTable;
  if (!address) {
    // A default configuration (MP 1.4, 5): two processors, APIC IDs 0 and 1.
    if (!pointer[kMpFeature1]) return fail("bad MP table (address, entry)", floating);
    list.local_apic_address = kDefaultLocalApicAddress;
    add_cpu(list, 0);
    add_cpu(list, 1);
    *out = list;
    return StubStatus::success();
  }
  const uint8_t* header = memory.readable(address, kMpHeaderSize);
  if (!header || !has_signature(header, "PCMP")) return fail("bad MP table (address, entry)", address);
  uint16_t length = load_le<uint16_t>(header + kMpBaseLength);
  if (length < kMpHeaderSize) return fail("bad MP table (address, entry)", address);
  const uint8_t* table = memory.readable(address, length);
  if (!table) return fail("bad MP table (address, entry)", address);
  if (!sums_to_zero(table, length)) return fail("bad MP table (address, entry)", address);
  list.local_apic_address = load_le<uint32_t>(table + kMpLocalApic);
  uint16_t entries = load_le<uint16_t>(table + kMpEntryCount);
  uint64_t at = kMpHeaderSize;
  for (uint16_t i = 0; i < entries; ++i) {
    if (at >= length) return fail("bad MP table (address, entry)", address, i);
    uint8_t type = table[at];
    if (type > kMpLastType) return fail("bad MP table (address, entry)", address, i);
    uint64_t size = type == kMpProcessor ? kMpProcessorSize : kMpOtherSize;
    if (size > length - at) return fail("bad MP table (address, entry)", address, i);
    if (type == kMpProcessor && (table[at + 3] & kMpProcessorEnabled)) add_cpu(list, table[at + 1]);
    at += size;
  }
  *out = list;
  return StubStatus::success();
}

}  // namespace

int32_t cpu_index_of(const CpuList& cpus, uint32_t apic_id) {
  for (uint32_t i = 0; i < cpus.count; ++i)
    if (cpus.apic_id[i] == apic_id) return static_cast<int32_t>(i);
  return -1;
}

StubStatus find_cpus(PhysicalMemory& memory, uint64_t rsdp, CpuList* out) {
  if (rsdp) {
    uint64_t madt = 0;
    KPACK_TRY(find_madt(memory, rsdp, &madt));
    if (madt) return read_madt(memory, madt, out);
  }
  if (uint64_t floating = find_mp_floating(memory)) return read_mp_table(memory, floating, out);
  return fail("no ACPI MADT and no MP table");
}

uint32_t cpus_to_start(const CpuList& cpus, const CpuStartRules& rules, uint32_t ids[kMaxCpus]) {
  constexpr uint32_t kXapicBroadcast = 0xFF;
  uint32_t n = 0;
  for (uint32_t i = 0; i < cpus.count && n + 1 < rules.max_cpus; ++i) {
    uint32_t id = cpus.apic_id[i];
    if (id == rules.self || int64_t{id} == rules.disabled_apic_id) continue;
    if (!rules.x2apic && id >= kXapicBroadcast) continue;
    ids[n++] = id;
  }
  return n;
}

}  // namespace kpack
