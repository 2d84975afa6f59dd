#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "stub/engine/confidential_vm.h"

using namespace kpack;

namespace {

// A CPU that answers from a recording, and remembers every MSR it was asked for (an MSR the CPU
// lacks would raise #GP on real hardware). Leaves it has no answer for read as zeros.
struct RecordedCpu {
  std::map<uint32_t, CpuidResult> leaves;
  std::map<uint32_t, uint64_t> msrs;
  mutable std::vector<uint32_t> msrs_read;

  CpuidResult cpuid(uint32_t leaf, uint32_t) const {
    auto it = leaves.find(leaf);
    return it == leaves.end() ? CpuidResult{0, 0, 0, 0} : it->second;
  }
  uint64_t read_msr(uint32_t msr) const {
    msrs_read.push_back(msr);
    return msrs.at(msr);
  }
};

// QEMU's answers for an SEV guest (target/i386/cpu.c, cpu_x86_cpuid, leaf 0x8000001F: EAX bit 1
// SEV, bit 3 SEV-ES, bit 4 SEV-SNP; EBX the C-bit position 51 and 1 reduced physical bit, as
// docs/system/i386/amd-memory-encryption.rst sets them for EPYC), whose level it raises to
// 0x8000001F; SEV_STATUS bits as Linux's msr-index.h names them (0 SEV, 1 SEV-ES, 2 SEV-SNP).
RecordedCpu epyc_guest(uint32_t encryption_eax, uint64_t sev_status) {
  RecordedCpu cpu;
  cpu.leaves[0x80000000] = {0x8000001F, 0x68747541, 0x444D4163, 0x69746E65};  // "AuthenticAMD"
  cpu.leaves[0x8000001F] = {encryption_eax, 51 | 1 << 6, 0, 0};
  cpu.msrs[kMsrSevStatus] = sev_status;
  return cpu;
}

// A TDX guest's leaf 0x21 (Intel TDX Module spec, Linux's TDX_IDENT "IntelTDX    ").
RecordedCpu tdx_guest() {
  RecordedCpu cpu;
  cpu.leaves[0x21] = {0, 0x65746E49, 0x20202020, 0x5844546C};
  cpu.leaves[0x80000000] = {0x80000008, 0, 0, 0};
  return cpu;
}

// A plain Intel CPU: extended leaves end at 0x80000008, and it has no SEV_STATUS MSR at all.
RecordedCpu plain_intel() {
  RecordedCpu cpu;
  cpu.leaves[0x21] = {0x00000001, 0x00000002, 0x00000100,
                      0x00000002};  // leaf 0x1F's data, Intel's answer past the last
  cpu.leaves[0x80000000] = {0x80000008, 0, 0, 0};
  return cpu;
}

}  // namespace

TEST_CASE("an SEV-SNP guest: SEV_STATUS says SNP, and its unimplemented features refuse the EFI boot") {
  RecordedCpu cpu = epyc_guest(0x1A, 0x7);
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK(probe.encryption_leaf == 0x1A);
  CHECK(probe.sev_status == 0x7);
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kSevSnp);
  CHECK(std::strcmp(confidential_vm_name(ConfidentialVm::kSevSnp), "SEV-SNP") == 0);
  CHECK(check_confidential_vm_for_efi(ConfidentialVm::kSevSnp, probe).ok());
  CHECK_FALSE(may_start_application_processors(ConfidentialVm::kSevSnp));
  StubStatus legacy = check_confidential_vm_for_legacy(ConfidentialVm::kSevSnp, probe);
  CHECK(std::strcmp(legacy.message,
                    "SEV-ES/SEV-SNP guest: the boot-protocol entries cannot handle #VC; boot the EFI entry") == 0);
  CHECK(legacy.a == 0x7);

  // VTOM (bit 3) and Secure TSC (bit 11) need the kernel's own support; IBS virtualization (bit 14) does not.
  probe.sev_status = 0x7 | 1u << 3 | 1u << 11 | 1u << 14;
  StubStatus efi = check_confidential_vm_for_efi(ConfidentialVm::kSevSnp, probe);
  CHECK(std::strcmp(efi.message, "SEV-SNP features the kernel may not implement are on") == 0);
  CHECK(efi.a == (1u << 3 | 1u << 11));
  CHECK(efi.b == probe.sev_status);
}

TEST_CASE("SEV and SEV-ES guests: told apart by SEV_STATUS, not by what CPUID offers") {
  RecordedCpu sev = epyc_guest(0x2, 0x1);
  ConfidentialVmProbe probe = probe_confidential_vm(sev);
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kSev);
  CHECK(may_start_application_processors(ConfidentialVm::kSev));
  CHECK(std::strcmp(check_confidential_vm_for_legacy(ConfidentialVm::kSev, probe).message,
                    "SEV guest: the boot-protocol entries cannot map encrypted memory; boot the EFI entry") == 0);

  RecordedCpu sev_es = epyc_guest(0xA, 0x3);
  probe = probe_confidential_vm(sev_es);
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kSevEs);
  CHECK(check_confidential_vm_for_efi(ConfidentialVm::kSevEs, probe).ok());
  CHECK_FALSE(may_start_application_processors(ConfidentialVm::kSevEs));
}

TEST_CASE("an AMD host that offers SEV but is no guest: SEV_STATUS reads 0") {
  RecordedCpu cpu = epyc_guest(0x1F, 0);  // SME, SEV, page flush, SEV-ES and SEV-SNP supported
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK(cpu.msrs_read == std::vector<uint32_t>{kMsrSevStatus});
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kNone);
  CHECK(check_confidential_vm_for_legacy(ConfidentialVm::kNone, probe).ok());
  CHECK(may_start_application_processors(ConfidentialVm::kNone));
}

TEST_CASE("an AMD CPU without SEV: SEV_STATUS is never read") {
  RecordedCpu cpu = epyc_guest(0x1, 0);  // SME only
  CHECK(classify_confidential_vm(probe_confidential_vm(cpu)) == ConfidentialVm::kNone);
  CHECK(cpu.msrs_read.empty());
}

TEST_CASE("a TDX guest: leaf 0x21's signature, and nothing else asked") {
  RecordedCpu cpu = tdx_guest();
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK(probe.tdx_signature);
  CHECK(probe.max_extended_leaf == 0);
  CHECK(cpu.msrs_read.empty());
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kTdx);
  CHECK(std::strcmp(check_confidential_vm_for_legacy(ConfidentialVm::kTdx, probe).message,
                    "TDX guest: the boot-protocol entries cannot handle #VE; boot the EFI entry") == 0);
  CHECK(check_confidential_vm_for_efi(ConfidentialVm::kTdx, probe).ok());
  CHECK_FALSE(may_start_application_processors(ConfidentialVm::kTdx));
}

TEST_CASE("a plain Intel CPU: no SEV leaf, so no MSR read") {
  RecordedCpu cpu = plain_intel();
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK_FALSE(probe.tdx_signature);
  CHECK(probe.max_extended_leaf == 0x80000008);
  CHECK(cpu.msrs_read.empty());
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kNone);
}
