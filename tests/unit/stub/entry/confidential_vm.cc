#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "stub/entry/confidential_vm.h"

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
  StubStatus legacy = check_confidential_vm_for_legacy(ConfidentialVm::kSevSnp, probe);
  CHECK(std::strcmp(legacy.message, "SEV-ES/SEV-SNP guest needs the EFI entry, not the boot protocol's") == 0);
  CHECK(legacy.a == 0x7);
  CHECK(legacy_refusal_channel(ConfidentialVm::kSevSnp) == RefusalChannel::kGhcbTermination);

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
  CHECK(std::strcmp(check_confidential_vm_for_legacy(ConfidentialVm::kSev, probe).message,
                    "SEV guest: the boot-protocol entries cannot map encrypted memory; boot the EFI entry") == 0);
  CHECK(legacy_refusal_channel(ConfidentialVm::kSev) == RefusalChannel::kCom1);

  RecordedCpu sev_es = epyc_guest(0xA, 0x3);
  probe = probe_confidential_vm(sev_es);
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kSevEs);
  CHECK(check_confidential_vm_for_efi(ConfidentialVm::kSevEs, probe).ok());
  CHECK(std::strcmp(check_confidential_vm_for_legacy(ConfidentialVm::kSevEs, probe).message,
                    "SEV-ES/SEV-SNP guest needs the EFI entry, not the boot protocol's") == 0);
  CHECK(legacy_refusal_channel(ConfidentialVm::kSevEs) == RefusalChannel::kGhcbTermination);
}

TEST_CASE("an AMD host that offers SEV but is no guest: SEV_STATUS reads 0") {
  RecordedCpu cpu = epyc_guest(0x1F, 0);  // SME, SEV, page flush, SEV-ES and SEV-SNP supported
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK(cpu.msrs_read == std::vector<uint32_t>{kMsrSevStatus});
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kNone);
  CHECK(check_confidential_vm_for_legacy(ConfidentialVm::kNone, probe).ok());
  CHECK(legacy_refusal_channel(ConfidentialVm::kNone) == RefusalChannel::kCom1);
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
  StubStatus legacy = check_confidential_vm_for_legacy(ConfidentialVm::kTdx, probe);
  CHECK(std::strcmp(legacy.message, "TDX guest needs the EFI entry, not the boot protocol's") == 0);
  CHECK(std::strlen("kpack: ") + std::strlen(legacy.message) <= kTdFatalMessageBytes);
  CHECK(legacy_refusal_channel(ConfidentialVm::kTdx) == RefusalChannel::kTdxHypercalls);
  CHECK(check_confidential_vm_for_efi(ConfidentialVm::kTdx, probe).ok());
}

TEST_CASE("a plain Intel CPU: no SEV leaf, so no MSR read") {
  RecordedCpu cpu = plain_intel();
  ConfidentialVmProbe probe = probe_confidential_vm(cpu);
  CHECK_FALSE(probe.tdx_signature);
  CHECK(probe.max_extended_leaf == 0x80000008);
  CHECK(cpu.msrs_read.empty());
  CHECK(classify_confidential_vm(probe) == ConfidentialVm::kNone);
}

// Linux's own request, GHCB_MSR_TERM_REQ | GHCB_SEV_TERM_REASON(SEV_TERM_SET_GEN,
// GHCB_SEV_ES_PROT_UNSUPPORTED) = 0x100 | 0 << 12 | 1 << 16, checks the encoding; kpack's set is 0xF.
TEST_CASE("GHCB termination requests: Linux's encoding, kpack's reason set, SEV-ES told from SEV-SNP") {
  CHECK(ghcb_termination_request(0, 1) == 0x10100);
  CHECK(ghcb_termination_request(1, 4) == 0x41100);         // SEV_TERM_SET_LINUX, GHCB_TERM_CPUID
  CHECK(ghcb_termination_request(0x1F, 0xFF) == 0xFFF100);  // the set keeps its 4 bits
  CHECK(legacy_termination_request(0x3) == 0x1F100);
  CHECK(legacy_termination_request(0x7) == 0x2F100);
  CHECK(legacy_termination_request(0x7 | 1u << 3) == 0x2F100);
}

// Linux's tdx_io_in/tdx_io_out (arch/x86/boot/compressed/tdx.c): R10 TDX_HYPERCALL_STANDARD 0,
// R11 EXIT_REASON_IO_INSTRUCTION 30, R12 the size, R13 1 for out, R14 the port, R15 the value.
TEST_CASE("TDVMCALL port I/O: the registers Linux's compressed kernel passes for COM1") {
  TdVmCallRegisters out = tdvmcall_port_write(0x3F8, 'k');
  CHECK(out.rcx == 0xFC00);
  CHECK(out.r10 == 0);
  CHECK(out.r11 == 30);
  CHECK(out.r12 == 1);
  CHECK(out.r13 == 1);
  CHECK(out.r14 == 0x3F8);
  CHECK(out.r15 == 0x6B);
  CHECK(out.rbx == 0);
  TdVmCallRegisters in = tdvmcall_port_read(0x3FD);
  CHECK(in.r11 == 30);
  CHECK(in.r12 == 1);
  CHECK(in.r13 == 0);
  CHECK(in.r14 == 0x3FD);
  CHECK(in.r15 == 0);
}

// Linux's tdx_panic (arch/x86/coco/tdx/tdx.c): R11 TDVMCALL_REPORT_FATAL_ERROR 0x10003, R12 0, the
// message's 64 bytes little-endian in R14, R15, RBX, RDI, RSI, R8, R9, RDX; KVM copies exactly
// those registers whose bit is set in RCX.
TEST_CASE("TDVMCALL ReportFatalError: the message in the GHCI's register order") {
  TdVmCallRegisters fatal =
      tdvmcall_report_fatal_error("kpack: ", "TDX guest needs the EFI entry, not the boot protocol's");
  CHECK(fatal.rcx == 0xFFCC);
  CHECK(fatal.r10 == 0);
  CHECK(fatal.r11 == 0x10003);
  CHECK(fatal.r12 == 0);
  CHECK(fatal.r13 == 0);
  CHECK(fatal.r14 == 0x54203a6b6361706bull);  // "kpack: T"
  CHECK(fatal.r15 == 0x7473657567205844ull);  // "DX guest"
  CHECK(fatal.rbx == 0x7420736465656e20ull);  // " needs t"
  CHECK(fatal.rdi == 0x6520494645206568ull);  // "he EFI e"
  CHECK(fatal.rsi == 0x6f6e202c7972746eull);  // "ntry, no"
  CHECK(fatal.r8 == 0x6f62206568742074ull);   // "t the bo"
  CHECK(fatal.r9 == 0x6f746f727020746full);   // "ot proto"
  CHECK(fatal.rdx == 0x73276c6f63ull);        // "col's", then zeros
  char bytes[65] = {};
  uint64_t words[8] = {fatal.r14, fatal.r15, fatal.rbx, fatal.rdi, fatal.rsi, fatal.r8, fatal.r9, fatal.rdx};
  std::memcpy(bytes, words, 64);
  CHECK(std::string(bytes) == "kpack: TDX guest needs the EFI entry, not the boot protocol's");

  // Past 64 bytes the message is cut: the VMM assumes the terminating zero after them.
  TdVmCallRegisters cut = tdvmcall_report_fatal_error("kpack: ", std::string(80, 'x').c_str());
  CHECK(cut.rdx == 0x7878787878787878ull);
}
