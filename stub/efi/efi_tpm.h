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

// What the Linux stub measures into PCR 9, each with its tagged-event ID and description.
enum class MeasuredData { kInitrd, kLoadOptions };

// HashLogExtendEvent of `size` bytes at `address`; quietly nothing without a TPM or on failure
// (the stub only warns).
void measure_into_pcr9(const Firmware& fw, uint64_t address, uint64_t size, MeasuredData what);

// The firmware's event log copied into the LINUX_EFI_TPM_EVENT_LOG_GUID configuration table.
void install_tpm_event_log(const Firmware& fw);

}  // namespace kpack::efi
