// Confidential VMs under EFI: the firmware's #VC and #VE handlers answer the boot CPU's CPUID, MSR
// and port accesses while boot services run, and its page tables carry the C-bit, so the EFI
// entries boot SEV, SEV-ES, SEV-SNP and TDX guests the way the Linux EFI stub does (the kernel then
// sets up its own handlers); what they cannot check is left out (the other CPUs' decoders).
#include "stub/efi/efi_boot.h"
#include "stub/arch/halt.h"

namespace kpack::efi {

EfiStatus check_confidential_vm(const Firmware& fw, ConfidentialVm* vm) {
  ConfidentialVmProbe probe = probe_confidential_vm(ThisCpu{});
  *vm = classify_confidential_vm(probe);
  StubStatus refused = check_confidential_vm_for_efi(*vm, probe);
  if (refused.ok()) return kSuccess;
  write_error([&fw](const char* text) { print(fw, text); }, refused);
  return kUnsupported;
}

// An SEV-SNP kernel finds its CPUID table and secrets page through boot_params.cc_blob_address
// only (the stock stub's snp_init fills it from the configuration table); a blob without its
// magic ends the boot there too.
EfiStatus store_confidential_vm_blob(const Firmware& fw, ConfidentialVm vm, boot::BootParams* params) {
  params->cc_blob_address = 0;
  if (vm != ConfidentialVm::kSevSnp) return kSuccess;
  const auto* blob = static_cast<const uint32_t*>(firmware_table(fw, kCcBlobTable));
  if (!blob || *blob != kCcBlobMagic || reinterpret_cast<uint64_t>(blob) > 0xFFFFFFFF) {
    print(fw, "kpack: error: SEV-SNP guest without the firmware's confidential-computing blob\n");
    return kUnsupported;
  }
  params->cc_blob_address = static_cast<uint32_t>(reinterpret_cast<uint64_t>(blob));
  return kSuccess;
}

}  // namespace kpack::efi
