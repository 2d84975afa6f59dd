// The boot-protocol and PVH entries' C++ before the stub relocates itself: entry64.S has set the
// CPU state (stack, GDT, exception handlers, SSE, the canary's %fs) and calls prepare_boot_inputs,
// which fills the BootInputs the one boot path takes. Like identity_map.cc, this holds no absolute
// relocation (the build checks): everything it reaches is RIP-relative until relocate_stub returns.
#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/entry/confidential_exit.h"
#include "stub/entry/entry_asm.h"
#include "stub/entry/pvh_boot_params.h"
#include "stub/entry/stub_image.h"
#include "stub/paging/identity_map.h"

namespace kpack {
namespace {

// The kernel's boot_params on the PVH entry: a page of the image's own (zeros in its file), which
// the stub keeps clear of the kernel and the kernel reads before it allocates anything. Bytes, not a
// BootParams: its member initializers would need a static constructor.
alignas(4096) uint8_t pvh_boot_params_page[sizeof(boot::BootParams)];
static_assert(sizeof(pvh_boot_params_page) == 4096);

// boot_params made of hvm_start_info, on the 32-bit entry's identity map of the low 4 GiB, before
// the stub's own map covers what it names; a damaged one prints a line on COM1 and halts.
boot::BootParams* boot_params_from_pvh(uint64_t start_info) {
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

}  // namespace
}  // namespace kpack

extern "C" void prepare_boot_inputs(uint64_t rsi, uint32_t entry, kpack::BootInputs* inputs) {
  using namespace kpack;
  *inputs = BootInputs{};
  inputs->start_tsc = rdtsc();
  inputs->entry = static_cast<RunEntry>(entry);
  inputs->image_base = startup_32;
  // A confidential VM is refused first, before the stub's own identity map (see confidential_vm.h).
  refuse_confidential_vm();
  // Nothing may use the packer's record before it is checked: a bad one halts with its line.
  StubStatus status = take_packer_record(inputs);
  if (!status.ok()) halt_with(status);
  inputs->params =
      inputs->entry == RunEntry::kPvh ? boot_params_from_pvh(rsi) : reinterpret_cast<boot::BootParams*>(rsi);
  // Our own identity map of 0..4 GiB: a loader's may cover only the image, and the kernel may go
  // anywhere in RAM. It also maps the 1 GiB windows holding the image, boot_params and the command
  // line when a loader put them above 4 GiB (too many such windows: an error and a halt).
  write_cr3(build_identity_map(&stub_page_tables, reinterpret_cast<uint64_t>(startup_32), inputs->params,
                               inputs->packer_record->image_size));
  relocate_stub(inputs);
}
