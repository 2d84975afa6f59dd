// The PVH entry's C++ before the stub relocates itself (entry64.S): boot_params made of
// hvm_start_info, or one error line on COM1 and a halt. Like early_record.cc, this must hold no
// absolute relocation (the build checks).
#include "stub/arch/halt.h"
#include "stub/entry/pvh_boot_params.h"
#include "stub/runtime/asm_symbols.h"

namespace {

// Inside the image, which the stub keeps clear of the kernel: the kernel copies it before it
// frees anything. Bytes, not a BootParams: its constructor would be a static constructor, run
// after relocation over what this entry wrote (and an absolute relocation in .init_array).
alignas(16) uint8_t pvh_boot_params[sizeof(kpack::boot::BootParams)];

}  // namespace

// entry64.S, on the PVH entry, on the 32-bit entry's identity map of the low 4 GiB.
extern "C" kpack::boot::BootParams* boot_params_from_pvh(uint64_t start_info) {
  using namespace kpack;
  constexpr uint64_t kReachable = 1ull << 32;
  if (!start_info || start_info > kReachable - sizeof(pvh::StartInfo))
    halt_with(fail("PVH: hvm_start_info lies out of reach", start_info));
  const auto& info = *reinterpret_cast<const pvh::StartInfo*>(start_info);
  StubStatus status = check_pvh_start_info(info, kReachable);
  if (!status.ok()) halt_with(status);
  const auto* initrd = info.nr_modules ? reinterpret_cast<const pvh::Module*>(uint64_t{info.modlist_paddr}) : nullptr;
  auto* params = reinterpret_cast<boot::BootParams*>(pvh_boot_params);
  boot_params_from_start_info(info, reinterpret_cast<const pvh::MemmapEntry*>(uint64_t{info.memmap_paddr}), initrd,
                              params);
  return params;
}
