// Runs before the stub relocates itself (stub/entry/boot_protocol_entry.cc): it must hold no absolute
// relocation, so no table of pointers (the build checks).
#include "stub/entry/confidential_vm.h"

namespace kpack {

bool is_tdx_signature(uint32_t ebx, uint32_t ecx, uint32_t edx) {
  return ebx == kTdxSignatureEbx && edx == kTdxSignatureEdx && ecx == kTdxSignatureEcx;
}

ConfidentialVm classify_confidential_vm(const ConfidentialVmProbe& probe) {
  if (probe.tdx_signature) return ConfidentialVm::kTdx;
  // SEV_STATUS is what the hypervisor cannot forge; the CPUID bit only says the MSR exists.
  if (probe.sev_status & kSevStatusSevSnp) return ConfidentialVm::kSevSnp;
  if (probe.sev_status & kSevStatusSevEs) return ConfidentialVm::kSevEs;
  if (probe.sev_status & kSevStatusSev) return ConfidentialVm::kSev;
  return ConfidentialVm::kNone;
}

const char* confidential_vm_name(ConfidentialVm vm) {
  if (vm == ConfidentialVm::kSev) return "SEV";
  if (vm == ConfidentialVm::kSevEs) return "SEV-ES";
  if (vm == ConfidentialVm::kSevSnp) return "SEV-SNP";
  if (vm == ConfidentialVm::kTdx) return "TDX";
  return "none";
}

StubStatus check_confidential_vm_for_legacy(ConfidentialVm vm, const ConfidentialVmProbe& probe) {
  // The identity map has no C-bit: the kernel would be decoded into memory read back as ciphertext.
  if (vm == ConfidentialVm::kSev)
    return fail("SEV guest: the boot-protocol entries cannot map encrypted memory; boot the EFI entry",
                probe.sev_status);
  // Each CPUID and port access the stub makes would raise an exception only a firmware handler answers.
  if (vm == ConfidentialVm::kSevEs || vm == ConfidentialVm::kSevSnp)
    return fail("SEV-ES/SEV-SNP guest needs the EFI entry, not the boot protocol's", probe.sev_status);
  // Short enough for ReportFatalError's 64 bytes after "kpack: ".
  if (vm == ConfidentialVm::kTdx) return fail("TDX guest needs the EFI entry, not the boot protocol's");
  return StubStatus::success();
}

RefusalChannel legacy_refusal_channel(ConfidentialVm vm) {
  if (vm == ConfidentialVm::kSevEs || vm == ConfidentialVm::kSevSnp) return RefusalChannel::kGhcbTermination;
  if (vm == ConfidentialVm::kTdx) return RefusalChannel::kTdxHypercalls;
  return RefusalChannel::kCom1;
}

StubStatus check_confidential_vm_for_efi(ConfidentialVm vm, const ConfidentialVmProbe& probe) {
  uint64_t unsupported = probe.sev_status & kSnpFeaturesKernelMustImplement;
  if (vm == ConfidentialVm::kSevSnp && unsupported)
    return fail("SEV-SNP features the kernel may not implement are on", unsupported, probe.sev_status);
  return StubStatus::success();
}

}  // namespace kpack
