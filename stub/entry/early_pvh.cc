// The PVH entry's C++ before the stub relocates itself (entry64.S): boot_params made of
// hvm_start_info, or one error line on COM1 and a halt. Like early_packer_record.cc, this must hold no
// absolute relocation (the build checks).
#include "stub/arch/halt.h"
#include "stub/entry/pvh_boot_params.h"
#include "stub/entry/entry_asm.h"

namespace {
// The kernel's boot_params on the PVH entry: a page of the image's own (zeros in its file), which
// the stub keeps clear of the kernel and the kernel reads before it allocates anything. Bytes, not a
// BootParams: its member initializers would need a static constructor.
alignas(4096) uint8_t pvh_boot_params_page[sizeof(kpack::boot::BootParams)];
static_assert(sizeof(pvh_boot_params_page) == 4096);
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
  auto* params = reinterpret_cast<boot::BootParams*>(pvh_boot_params_page);
  boot_params_from_start_info(info, reinterpret_cast<const pvh::MemmapEntry*>(uint64_t{info.memmap_paddr}), initrd,
                              params);
  return params;
}
