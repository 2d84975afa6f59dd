// PCR 9 and the event log, step for step as the Linux EFI stub (6.1) does them: the same events
// (type, PCR, tag, description, NUL included) over the same bytes, so the PCR's value is the same;
// the log handed over whole, with Linux's count of how much of the final events table it holds.
#include "stub/efi/efi_tpm.h"

namespace kpack::efi {
namespace {

uint16_t read16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
uint32_t read32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// The log's first event, in the SHA-1 format whatever the log's: TCG_PCR_EVENT, whose data in a
// crypto-agile log is the Spec ID event naming each digest's algorithm and size.
constexpr uint32_t kFirstEventDigestAt = 8, kFirstEventDataSizeAt = 28, kFirstEventDataAt = 32;
constexpr uint32_t kSpecIdAlgorithmCountAt = 24, kSpecIdAlgorithmsAt = 28;
constexpr uint32_t kEventTypeNoAction = 3;

// The size of the crypto-agile event (TCG_PCR_EVENT2) at `event`, its digests' sizes from the Spec
// ID event; 0 where Linux's __calc_tpm2_event_size finds no event (the kernel parses the log with
// the same rules, so the two must agree on where it ends).
uint64_t tcg2_event_size(const uint8_t* event, const uint8_t* log) {
  static constexpr uint8_t kZeroDigest[20] = {};
  static constexpr char kSpecIdSignature[] = "Spec ID Event03";
  if (read32(log) != 0 || read32(log + 4) != kEventTypeNoAction ||
      __builtin_memcmp(log + kFirstEventDigestAt, kZeroDigest, sizeof(kZeroDigest)))
    return 0;
  const uint8_t* spec_id = log + kFirstEventDataAt;
  uint32_t algorithms = read32(spec_id + kSpecIdAlgorithmCountAt), digests = read32(event + 8);
  if (__builtin_memcmp(spec_id, kSpecIdSignature, sizeof(kSpecIdSignature)) || !algorithms || digests != algorithms)
    return 0;
  const uint8_t* at = event + 12;
  for (uint32_t i = 0; i < digests; ++i) {
    uint16_t algorithm = read16(at);
    at += 2;
    uint32_t j = 0;
    while (j < algorithms && read16(spec_id + kSpecIdAlgorithmsAt + 4 * j) != algorithm) ++j;
    if (j == algorithms) return 0;  // a digest of unknown length: nothing after it can be read
    at += read16(spec_id + kSpecIdAlgorithmsAt + 4 * j + 2);
  }
  uint32_t data_size = read32(at);
  if (read32(event + 4) == 0 && data_size == 0) return 0;  // zeroed memory past the log's end
  return static_cast<uint64_t>(at + 4 + data_size - event);
}

// GetEventLog names the last entry, not the end: the log's size adds that entry's.
uint64_t event_log_size(uint32_t format, uint64_t location, uint64_t last_entry) {
  if (!last_entry) return 0;
  const auto* last = reinterpret_cast<const uint8_t*>(last_entry);
  uint64_t last_size = format == kEventLogFormatTcg2 ? tcg2_event_size(last, reinterpret_cast<const uint8_t*>(location))
                                                     : kFirstEventDataAt + read32(last + kFirstEventDataSizeAt);
  return last_entry - location + last_size;
}

// Bytes of the final events table already logged (the firmware copies events there once GetEventLog
// has been called): the kernel skips them when it appends the table's events to the log.
uint32_t final_events_preboot_size(const Firmware& fw, uint32_t format, uint64_t location) {
  if (format != kEventLogFormatTcg2) return 0;
  const auto* table = static_cast<const uint8_t*>(firmware_table(fw, kTcg2FinalEventsTable));
  if (!table) return 0;
  const auto* log = reinterpret_cast<const uint8_t*>(location);
  uint64_t size = 0, events = reinterpret_cast<const Tcg2FinalEvents*>(table)->number_of_events;
  for (uint64_t i = 0; i < events; ++i) size += tcg2_event_size(table + sizeof(Tcg2FinalEvents) + size, log);
  return static_cast<uint32_t>(size);
}

}  // namespace

void measure_into_pcr9(const Firmware& fw, uint64_t address, uint64_t size, MeasuredData what) {
  static constexpr char kInitrd[] = "Linux initrd", kLoadOptions[] = "LOADED_IMAGE::LoadOptions";
  constexpr uint32_t kInitrdTag = 0x8F3B22EC, kLoadOptionsTag = 0x8F3B22ED, kPcr = 9;
  Tcg2* tcg2 = locate_protocol<Tcg2, kTcg2Protocol>(fw);
  if (!tcg2) return;
  bool initrd = what == MeasuredData::kInitrd;
  const char* description = initrd ? kInitrd : kLoadOptions;
  uint32_t description_size = initrd ? sizeof(kInitrd) : sizeof(kLoadOptions);  // NUL included, as in Linux
  TaggedEvent tag{initrd ? kInitrdTag : kLoadOptionsTag, description_size};

  // EFI_TCG2_EVENT, the tag, its description: one packed run of bytes.
  uint8_t event[sizeof(Tcg2Event) + sizeof(TaggedEvent) + sizeof(kLoadOptions)];
  uint32_t event_size = static_cast<uint32_t>(sizeof(Tcg2Event) + sizeof(TaggedEvent) + tag.data_size);
  Tcg2Event header{event_size, kTcg2EventHeaderSize, kTcg2EventHeaderVersion, kPcr, kEventTypeEventTag};
  __builtin_memcpy(event, &header, sizeof(header));
  __builtin_memcpy(event + sizeof(header), &tag, sizeof(tag));
  __builtin_memcpy(event + sizeof(header) + sizeof(tag), description, tag.data_size);
  tcg2->hash_log_extend_event(tcg2, 0, address, size, reinterpret_cast<const Tcg2Event*>(event));
}

void install_tpm_event_log(const Firmware& fw) {
  Tcg2* tcg2 = locate_protocol<Tcg2, kTcg2Protocol>(fw);
  if (!tcg2) return;
  // The crypto-agile log if the firmware keeps one, else the SHA-1 one.
  uint32_t format = kEventLogFormatTcg2;
  uint64_t location = 0, last_entry = 0;
  uint8_t truncated = 0;
  EfiStatus status = tcg2->get_event_log(tcg2, format, &location, &last_entry, &truncated);
  if (failed(status) || !location) {
    format = kEventLogFormatTcg12;
    status = tcg2->get_event_log(tcg2, format, &location, &last_entry, &truncated);
    if (failed(status) || !location) return;
  }

  // A copy in memory the kernel keeps (ACPI reclaim), even of an empty log.
  uint64_t size = event_log_size(format, location, last_entry);
  void* buffer = nullptr;
  if (failed(fw.boot->allocate_pool(kAcpiReclaimMemory, sizeof(LinuxTpmEventLog) + size, &buffer))) return;
  auto* table = static_cast<LinuxTpmEventLog*>(buffer);
  __builtin_memset(table, 0, sizeof(LinuxTpmEventLog) + size);
  table->size = static_cast<uint32_t>(size);
  table->final_events_preboot_size = final_events_preboot_size(fw, format, location);
  table->version = static_cast<uint8_t>(format);
  __builtin_memcpy(reinterpret_cast<uint8_t*>(table) + offsetof(LinuxTpmEventLog, log),
                   reinterpret_cast<const void*>(location), size);
  if (failed(fw.boot->install_configuration_table(&kLinuxTpmEventLog, table))) fw.boot->free_pool(table);
}

}  // namespace kpack::efi
