#include "stub/entry/confidential_exit.h"

#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/entry/confidential_vm.h"

namespace kpack {
namespace {

constexpr uint16_t kCom1 = 0x3F8;
constexpr uint16_t kCom1LineStatus = kCom1 + 5;
constexpr uint8_t kLineStatusThrEmpty = 0x20;

uint8_t tdx_inb(uint16_t port) {
  TdVmCallRegisters call = tdvmcall_port_read(port);
  tdvmcall(call);
  return static_cast<uint8_t>(call.r11);
}

void tdx_outb(uint16_t port, uint8_t value) {
  TdVmCallRegisters call = tdvmcall_port_write(port, value);
  tdvmcall(call);
}

// The UART as the firmware or loader set it up: a TD only boots through TDVF, which does. Bounded
// waits, as serial.cc's: a VMM without a UART must not keep the line from ReportFatalError.
void tdx_com1_write(const char* text) {
  for (; *text; ++text) {
    if (*text == '\n') tdx_com1_write("\r");
    for (int spins = 0; spins < 100000 && !(tdx_inb(kCom1LineStatus) & kLineStatusThrEmpty); ++spins) {
    }
    tdx_outb(kCom1, static_cast<uint8_t>(*text));
  }
}

}  // namespace

void refuse_confidential_vm() {
  ConfidentialVmProbe probe = probe_confidential_vm(ThisCpu{});
  ConfidentialVm vm = classify_confidential_vm(probe);
  StubStatus refused = check_confidential_vm_for_legacy(vm, probe);
  if (refused.ok()) return;
  RefusalChannel channel = legacy_refusal_channel(vm);
  if (channel == RefusalChannel::kGhcbTermination) terminate_sev_es_guest();
  if (channel == RefusalChannel::kTdxHypercalls) halt_tdx_guest(refused);
  halt_with(refused);
}

void terminate_sev_es_guest() {
  // SEV_STATUS is never intercepted, so reading it cannot raise another #VC.
  write_msr(kMsrSevEsGhcb, legacy_termination_request(read_msr(kMsrSevStatus)));
  vmgexit();
  halt();  // a hypervisor that resumes the guest anyway: HLT is no #VC
}

void halt_tdx_guest(StubStatus status) {
  write_error([](const char* text) { tdx_com1_write(text); }, status);
  tdx_com1_write("kpack: halted; the kernel was not started\n");
  // As Linux's tdx_panic: asked again if the VMM returns. Never HLT, which is itself a #VE.
  TdVmCallRegisters fatal = tdvmcall_report_fatal_error("kpack: ", status.message);
  for (;;) {
    TdVmCallRegisters call = fatal;
    tdvmcall(call);
  }
}

}  // namespace kpack
