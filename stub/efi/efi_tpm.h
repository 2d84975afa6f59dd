// Measured boot under EFI, as the Linux EFI stub does it (6.1: libstub/efi-stub-helper.c
// efi_measure_tagged_event, libstub/tpm.c efi_retrieve_tpm2_eventlog), so that PCR 9 and the
// event log the kernel exposes (/sys/kernel/security/tpm0/binary_bios_measurements) are the same
// whether the kernel was packed or not. Without a TPM (no EFI_TCG2_PROTOCOL) both do nothing.
// 6.1 knows no EFI_CC_MEASUREMENT_PROTOCOL (confidential VMs' RTMR measurements came later), so
// neither does this.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "stub/efi/efi_boot.h"

namespace kpack::efi {

// EFI_TCG2_PROTOCOL (TCG PC Client Platform EFI Protocol Specification; EDK2 Tcg2Protocol.h).
struct Tcg2Event;
struct Tcg2 {
  void* get_capability;
  Status(KPACK_EFIAPI* get_event_log)(Tcg2* self, uint32_t format, uint64_t* location, uint64_t* last_entry,
                                      uint8_t* truncated);
  Status(KPACK_EFIAPI* hash_log_extend_event)(Tcg2* self, uint64_t flags, uint64_t data, uint64_t data_size,
                                              const Tcg2Event* event);
};
inline constexpr uint32_t kEventLogFormatTcg12 = 1;  // SHA-1 only, fixed-size entries
inline constexpr uint32_t kEventLogFormatTcg2 = 2;   // crypto agile: a digest per PCR bank

// EFI_TCG2_EVENT: packed, so the header starts at byte 4 and the event data at byte 18.
struct [[gnu::packed]] Tcg2Event {
  uint32_t size;  // all of it: this header and the event data
  uint32_t header_size;
  uint16_t header_version;
  uint32_t pcr_index;
  uint32_t event_type;
};
static_assert(sizeof(Tcg2Event) == 18);
inline constexpr uint16_t kTcg2EventHeaderVersion = 1;
inline constexpr uint32_t kTcg2EventHeaderSize = 14;  // header_size .. event_type

// An EV_EVENT_TAG event's data: TCG_PCClientTaggedEvent, then `data_size` bytes.
struct [[gnu::packed]] TaggedEvent {
  uint32_t id;
  uint32_t data_size;
};
inline constexpr uint32_t kEventTypeEventTag = 6;  // EV_EVENT_TAG

// EFI_TCG2_FINAL_EVENTS_TABLE: events logged after GetEventLog, which the kernel reads from here.
struct Tcg2FinalEvents {
  uint64_t version;
  uint64_t number_of_events;  // TCG_PCR_EVENT2 entries follow
};

// Linux's struct linux_efi_tpm_eventlog, the LINUX_EFI_TPM_EVENT_LOG_GUID table: the log starts
// at byte 9 (C's flexible array; sizeof stays 12 as in Linux, whose allocation counts it).
struct LinuxTpmEventLog {
  uint32_t size;
  uint32_t final_events_preboot_size;  // bytes of the final events table the log already holds
  uint8_t version;                     // kEventLogFormatTcg12 or kEventLogFormatTcg2
  uint8_t log[3];
};
static_assert(offsetof(LinuxTpmEventLog, log) == 9 && sizeof(LinuxTpmEventLog) == 12);

// What the Linux stub measures into PCR 9, each with its tagged-event ID and description.
enum class MeasuredData { kInitrd, kLoadOptions };

// HashLogExtendEvent of `size` bytes at `address`; quietly nothing without a TPM or on failure
// (the stub only warns).
void measure_into_pcr9(const Firmware& fw, uint64_t address, uint64_t size, MeasuredData what);

// The firmware's event log copied into the LINUX_EFI_TPM_EVENT_LOG_GUID configuration table.
void install_tpm_event_log(const Firmware& fw);

}  // namespace kpack::efi
