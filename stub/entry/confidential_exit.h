// How the boot-protocol entries stop in a confidential VM (stub/entry/confidential_vm.h says why
// they boot none): where COM1 and HLT need the hypervisor's help, through the hypervisor. Safe
// before self-relocation and before SSE is on (built -mgeneral-regs-only): the exception handlers
// call it too.
#pragma once

#include "stub/base/status.h"

namespace kpack {

// Returns only outside a confidential VM. Under SEV-ES and SEV-SNP its first CPUID already ends in
// the #VC handler, hence in terminate_sev_es_guest.
void refuse_confidential_vm();

// The GHCB termination request with kpack's reason, SEV-ES or SEV-SNP by SEV_STATUS.
[[noreturn]] void terminate_sev_es_guest();

// The error line on COM1 through TDVMCALL port I/O, then ReportFatalError until the VMM ends the TD.
[[noreturn]] void halt_tdx_guest(StubStatus status);

}  // namespace kpack
