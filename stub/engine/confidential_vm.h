// Confidential VMs (AMD SEV, SEV-ES, SEV-SNP; Intel TDX): which one the stub runs in, and what each
// entry may do there. Pure, so the host tests it on recorded CPUID and MSR values; the entries pass
// the CPU itself (stub/arch/cpu.h).
//
// Why it matters: under SEV every page the guest writes is encrypted with the C-bit of its page
// tables, which the legacy entries' identity map does not set (the kernel would be decoded into
// memory it then reads back as ciphertext). Under SEV-ES and SEV-SNP every CPUID, port I/O and most
// MSR accesses raise #VC, and under TDX they raise #VE: only a handler that talks to the hypervisor
// (the firmware's, while boot services run) can answer them.
#pragma once

#include <stdint.h>

#include "stub/arch/cpu.h"
#include "stub/engine/status.h"

namespace kpack {

enum class ConfidentialVm : uint8_t { kNone, kSev, kSevEs, kSevSnp, kTdx };

// The CPU's answers the decision needs (CPUID leaf 0x21, 0x8000001F and the SEV_STATUS MSR).
struct ConfidentialVmProbe {
  bool tdx_signature = false;      // CPUID 0x21 says "IntelTDX    "
  uint32_t max_extended_leaf = 0;  // CPUID 0x80000000 EAX (not read under TDX)
  uint32_t encryption_leaf = 0;    // CPUID 0x8000001F EAX, when that leaf exists
  uint64_t sev_status = 0;         // MSR 0xC0010131, read only when CPUID reports SEV
};

inline constexpr uint32_t kCpuidTdxLeaf = 0x21;
inline constexpr uint32_t kCpuidMaxExtendedLeaf = 0x80000000;
inline constexpr uint32_t kCpuidEncryptionLeaf = 0x8000001F;
inline constexpr uint32_t kEncryptionLeafSev = 1u << 1;  // EAX bit 1: the CPU can run SEV guests
inline constexpr uint64_t kSevStatusSev = 1u << 0, kSevStatusSevEs = 1u << 1, kSevStatusSevSnp = 1u << 2;

bool is_tdx_signature(uint32_t ebx, uint32_t ecx, uint32_t edx);

// Reads the CPU in the one order that never faults on a machine that is not a guest: TDX's leaf
// first (the TDX module answers it without a #VE, and stops every other question), the SEV_STATUS
// MSR only when CPUID reports SEV (reading it elsewhere raises #GP). Under SEV-ES and SEV-SNP the
// CPUIDs themselves raise #VC: callers run it where a handler answers them (see the .cc).
// `Cpu`: ThisCpu (stub/arch/cpu.h), or recorded answers.
template <typename Cpu>
ConfidentialVmProbe probe_confidential_vm(const Cpu& cpu) {
  ConfidentialVmProbe probe;
  auto tdx = cpu.cpuid(kCpuidTdxLeaf, 0);
  probe.tdx_signature = is_tdx_signature(tdx.ebx, tdx.ecx, tdx.edx);
  if (probe.tdx_signature) return probe;
  probe.max_extended_leaf = cpu.cpuid(kCpuidMaxExtendedLeaf, 0).eax;
  if (probe.max_extended_leaf < kCpuidEncryptionLeaf) return probe;
  probe.encryption_leaf = cpu.cpuid(kCpuidEncryptionLeaf, 0).eax;
  if (probe.encryption_leaf & kEncryptionLeafSev) probe.sev_status = cpu.read_msr(kMsrSevStatus);
  return probe;
}

ConfidentialVm classify_confidential_vm(const ConfidentialVmProbe& probe);
const char* confidential_vm_name(ConfidentialVm vm);

// The legacy entries boot none of them: the refusal names the reason (a = SEV_STATUS).
StubStatus check_confidential_vm_for_legacy(ConfidentialVm vm, const ConfidentialVmProbe& probe);

// The EFI entries boot all of them on the boot CPU alone (the firmware answers #VC and #VE for it
// until ExitBootServices), except an SEV-SNP guest whose hypervisor enabled features the kernel
// must implement itself: the stock stub refuses those too (have_unsupported_snp_features).
StubStatus check_confidential_vm_for_efi(ConfidentialVm vm, const ConfidentialVmProbe& probe);
bool may_start_application_processors(ConfidentialVm vm);

// SEV_STATUS bits a guest kernel has to handle itself before it may run with them on
// (SNP_FEATURES_IMPL_REQ of Linux's arch/x86/boot/compressed/sev.c; reserved bits count too).
inline constexpr uint64_t kSnpFeaturesKernelMustImplement =
    (0x1Full << 3) | (0x7ull << 10) | (1ull << 13) | (1ull << 15) | (1ull << 16) | (0x1Full << 18) | (~0ull << 24);

}  // namespace kpack
