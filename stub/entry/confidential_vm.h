// Confidential VMs (AMD SEV, SEV-ES, SEV-SNP; Intel TDX): which one the stub runs in, and what each
// entry may do there. Pure, so the host tests it on recorded CPUID and MSR values; the entries pass
// the CPU itself (stub/arch/cpu.h).
//
// Why it matters: under SEV every page the guest writes is encrypted with the C-bit of its page
// tables, which the legacy entries' identity map does not set (the kernel would be decoded into
// memory it then reads back as ciphertext). Under SEV-ES and SEV-SNP every CPUID, port I/O and most
// MSR accesses raise #VC, and under TDX they raise #VE: only a handler that talks to the hypervisor
// (the firmware's, while boot services run) can answer them.
//
// The boot-protocol entries boot none of them, and say so where each platform carries the line:
// COM1 under SEV; under SEV-ES and SEV-SNP, where COM1 itself raises #VC, a GHCB termination
// request the hypervisor reports; under TDX, COM1 through TDVMCALL port I/O, then ReportFatalError.
// The encodings are here, pure; stub/entry/confidential_exit.cc sends them.
#pragma once

#include <stdint.h>

#include "stub/arch/cpu.h"
#include "stub/base/status.h"

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

// "IntelTDX    " in EBX, EDX, ECX order (Linux's TDX_IDENT, arch/x86/boot/compressed/tdx.c).
inline constexpr uint32_t kTdxSignatureEbx = 0x65746E49, kTdxSignatureEdx = 0x5844546C, kTdxSignatureEcx = 0x20202020;
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

// Where a legacy entry's refusal goes: COM1 and HLT work natively only outside SEV-ES, SEV-SNP and TDX.
enum class RefusalChannel : uint8_t { kCom1, kGhcbTermination, kTdxHypercalls };
RefusalChannel legacy_refusal_channel(ConfidentialVm vm);

// The GHCB MSR protocol's termination request, written to MSR_AMD64_SEV_ES_GHCB before a VMGEXIT
// (GHCB specification, "Termination Request"; Linux's GHCB_MSR_TERM_REQ and
// GHCB_SEV_TERM_REASON(reason_set, reason_val), arch/x86/include/asm/sev-common.h): the request
// in bits 11:0, the reason set in 15:12, the reason in 23:16.
inline constexpr uint64_t kGhcbMsrTerminationRequest = 0x100;
constexpr uint64_t ghcb_termination_request(uint8_t reason_set, uint8_t reason) {
  return kGhcbMsrTerminationRequest | uint64_t{reason_set & 0xFu} << 12 | uint64_t{reason} << 16;
}

// kpack's reasons, in a set of their own: the GHCB specification uses set 0 and Linux set 1, so a
// host that logs "0xf:0x1" knows the kpack stub, not a kernel, ended the guest.
inline constexpr uint8_t kKpackTerminationReasonSet = 0xF;
enum class KpackTermination : uint8_t { kSevEsGuest = 1, kSevSnpGuest = 2 };

// What a legacy entry sends once a #VC has shown it runs in an SEV-ES or SEV-SNP guest.
constexpr uint64_t legacy_termination_request(uint64_t sev_status) {
  auto reason = sev_status & kSevStatusSevSnp ? KpackTermination::kSevSnpGuest : KpackTermination::kSevEsGuest;
  return ghcb_termination_request(kKpackTerminationReasonSet, static_cast<uint8_t>(reason));
}

// TDG.VP.VMCALL requests (Intel TDX GHCI; Linux's arch/x86/boot/compressed/tdx.c tdx_io_out and
// arch/x86/coco/tdx/tdx.c tdx_panic): R10 0 is a standard TDVMCALL, R11 its function, RCX the
// registers the VMM may see.
inline constexpr uint64_t kTdVmCallExposeIo = 0xFC00;       // R10..R15
inline constexpr uint64_t kTdVmCallExposeMessage = 0xFFCC;  // and RDX, RBX, RSI, RDI, R8, R9
inline constexpr uint64_t kTdVmCallIoInstruction = 30;      // EXIT_REASON_IO_INSTRUCTION
inline constexpr uint64_t kTdVmCallReportFatalError = 0x10003;
inline constexpr uint32_t kTdFatalMessageBytes = 64;

// Inline, so the #VE handler's build (-mgeneral-regs-only) compiles them before SSE is on.

// R12 the access size (1), R13 the direction (0 in, 1 out), R14 the port, R15 the value written.
constexpr TdVmCallRegisters tdvmcall_port_access(uint16_t port, uint64_t direction, uint8_t value) {
  TdVmCallRegisters call{};
  call.rcx = kTdVmCallExposeIo;
  call.r11 = kTdVmCallIoInstruction;
  call.r12 = 1;
  call.r13 = direction;
  call.r14 = port;
  call.r15 = value;
  return call;
}
constexpr TdVmCallRegisters tdvmcall_port_read(uint16_t port) { return tdvmcall_port_access(port, 0, 0); }
constexpr TdVmCallRegisters tdvmcall_port_write(uint16_t port, uint8_t value) {
  return tdvmcall_port_access(port, 1, value);
}

// R12 error code 0 (a panic); `prefix` then `message`, their first 64 bytes, in R14, R15, RBX, RDI,
// RSI, R8, R9, RDX, which the VMM reads as one string.
constexpr TdVmCallRegisters tdvmcall_report_fatal_error(const char* prefix, const char* message) {
  uint64_t words[kTdFatalMessageBytes / 8] = {};
  uint32_t at = 0;
  const char* parts[] = {prefix, message};
  for (const char* text : parts)
    for (; *text && at < kTdFatalMessageBytes; ++text, ++at) words[at / 8] |= uint64_t{uint8_t(*text)} << (at % 8 * 8);
  TdVmCallRegisters call{};
  call.rcx = kTdVmCallExposeMessage;
  call.r11 = kTdVmCallReportFatalError;
  call.r14 = words[0], call.r15 = words[1], call.rbx = words[2], call.rdi = words[3];
  call.rsi = words[4], call.r8 = words[5], call.r9 = words[6], call.rdx = words[7];
  return call;
}

// The EFI entries boot all of them (the firmware answers #VC and #VE until ExitBootServices),
// decoding on the boot CPU alone, except an SEV-SNP guest whose hypervisor enabled features the
// kernel must implement itself: the stock stub refuses those too (have_unsupported_snp_features).
StubStatus check_confidential_vm_for_efi(ConfidentialVm vm, const ConfidentialVmProbe& probe);

// SEV_STATUS bits a guest kernel has to handle itself before it may run with them on
// (SNP_FEATURES_IMPL_REQ of Linux's arch/x86/boot/compressed/sev.c; reserved bits count too).
inline constexpr uint64_t kSnpFeaturesKernelMustImplement =
    (0x1Full << 3) | (0x7ull << 10) | (1ull << 13) | (1ull << 15) | (1ull << 16) | (0x1Full << 18) | (~0ull << 24);

}  // namespace kpack
