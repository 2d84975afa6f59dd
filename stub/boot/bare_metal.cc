// Bare metal, the platform of every boot-protocol entry and of the EFI entries once they have
// left boot services: memory through the stub's own identity map, the application processors as
// helpers, and any error halts (or resets) with its line on COM1.
#include "stub/boot/bare_metal.h"

#include <new>

#include "stub/arch/cpu.h"
#include "stub/arch/emulated_tlb.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/arch/vector_registers.h"
#include "stub/base/range.h"
#include "stub/boot/boot_asm.h"
#include "stub/boot/boot_kernel.h"
#include "stub/boot/boot_platform.h"
#include "stub/entry/entry_asm.h"
#include "stub/machine/acpi_madt.h"
#include "stub/machine/acpi_rsdp.h"
#include "stub/machine/trampoline_page.h"
#include "stub/paging/identity_map.h"
#include "stub/runtime/stack_protector.h"
#include "stub/smp/smp.h"
#include "stub/unpack/kaslr.h"

namespace kpack {
namespace {

// The CPU's physical address width (CPUID 0x80000008), capped at MAXMEM: nothing above it can be
// mapped without setting reserved bits in a page-table entry.
uint64_t physical_address_limit() {
  if (cpuid(0x80000000).eax < 0x80000008) return 1ull << 36;
  uint64_t limit = 1ull << (cpuid(0x80000008).eax & 0xFF);
  return limit < kMaxPhysicalAddress ? limit : kMaxPhysicalAddress;
}

// Physical memory as the stub sees it: the identity map of 0..4 GiB, plus 1 GiB windows mapped on
// demand above it (setup_data, or a kernel placed high by KASLR).
class IdentityMemory final : public PhysicalMemory {
 public:
  const uint8_t* readable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }
  uint64_t reachable_below(uint64_t size) const override {
    uint64_t mappable = identity_mappable_below(size);
    return mappable < limit_ ? mappable : limit_;
  }

 private:
  uint8_t* pointer(uint64_t addr, uint64_t size) {
    Range wanted = range_of(addr, size);
    if ((wanted.empty() && size) || wanted.end > limit_) return nullptr;
    if (!identity_mapped(addr, size) && !map_identity(addr, size)) return nullptr;
    return reinterpret_cast<uint8_t*>(addr);
  }
  uint64_t limit_ = physical_address_limit();
};

// The application processors as the engine's frame workers: woken as soon as the stub knows its
// environment, so they come up while the boot CPU reads the kernel's headers and places it; given
// stacks in the engine's work area when it has frames to share; parked again (INIT,
// wait-for-SIPI, as the firmware left them) before the kernel starts them itself. Trouble leaves
// the boot CPU alone, with a reason for kpack.debug; it never stops the boot.
class ApplicationProcessors final : public FrameWorkers {
 public:
  ApplicationProcessors(const BootInputs& inputs, const StubOptions& options, const BootEnvironment& env,
                        PhysicalMemory& memory)
      : memory_(memory), debug_(options.debug), stop_first_helper_(options.test_stopped_helper) {
    request_.params = inputs.params;
    request_.params_addr = reinterpret_cast<uint64_t>(inputs.params);
    request_.env = &env;
    request_.memory = &memory;
    request_.image = range_of(reinterpret_cast<uint64_t>(inputs.image_base), inputs.packer_record->image_size);
    // No more than the engine can give work to, kpack.cpus= allows, or the kernel will bring up
    // itself (nr_cpus=1 in a crash kernel: the stub INITs no other CPU).
    uint64_t cpus = options.cpus ? options.cpus : kMaxFrameWorkers + 1;
    if (options.kernel_cpus && options.kernel_cpus < cpus) cpus = options.kernel_cpus;
    request_.max_cpus = static_cast<uint32_t>(cpus < kMaxFrameWorkers + 1 ? cpus : kMaxFrameWorkers + 1);
    request_.disabled_apic_id = options.disabled_apic_id;
    request_.break_trampoline = options.test_broken_trampoline;
  }

  // After the RSDP is in boot_params (a BIOS leaves it in low memory); after the EFI entries it is
  // left out of boot_params, as stock's EFI stub leaves it, and read here.
  void wake() {
    const boot::BootParams& params = *request_.params;
    request_.rsdp = params.acpi_rsdp_addr;
    if (!request_.rsdp) request_.rsdp = find_efi_rsdp(params.efi_info, memory_);
    if (!request_.rsdp) request_.rsdp = find_bios_rsdp(memory_);
    woken_ = smp::wake_helpers(request_, &report_);
  }

  uint32_t woken() const { return woken_; }

  uint64_t memory_for(uint32_t count) const override { return smp::helper_memory_size(count); }

  uint32_t start(void (*work)(void*, uint32_t), void* arg, uint32_t count, Range memory) override {
    work_ = work, arg_ = arg, work_handed_out_ = rdtsc();
    return smp::start_helpers(&ApplicationProcessors::run, this, count, memory, memory_);
  }

  // Also after a boot that gave them nothing to do (or failed): every woken AP is parked.
  void finish() override {
    if (!caller_done_) caller_done_ = rdtsc();
    returned_ += smp::park_helpers(&report_);
  }

  void before_decoding(uint32_t index, uint8_t* ram, uint64_t size, uint64_t working_set) override {
    uint64_t start = rdtsc();
    uint64_t pages = grow_emulated_tlb(ram, size, working_set);
    if (index == 0) tlb_pages_ = pages, tlb_cycles_ = rdtsc() - start;
    if (index != 0) helper_joined_[index] = start;
  }

  // kpack.test_stopped_helper: the first AP stays inside its first item until park_helpers gives
  // up on it and sends INIT, as a CPU that overran the bounded wait would.
  bool holds(uint32_t index) const override { return stop_first_helper_ && index == 1; }
  void hold(uint32_t) override {
    for (;;) asm volatile("pause");
  }

  HelperCounts counts() const {
    return {report_.found,  report_.started,   __atomic_load_n(&ran_, __ATOMIC_RELAXED),
            returned_,      report_.abandoned, report_.join_cycles,
            report_.problem};
  }

  void print_tlb() const {
    if (debug_ && tlb_pages_)
      serial::print("kpack: QEMU TCG: software TLB grown, %lu pages touched, cycles=%lu\n", tlb_pages_, tlb_cycles_);
  }

  // kpack.debug: where the decode's time went with helpers, in cycles from the work's handing out
  // (start): when the first helper was ready for its first item, when the boot CPU found the queue
  // empty, when the last helper did. Two CPUs reach half the time only if a helper joins early and
  // the last two are close; if they are and the ratio is still far from half, every CPU ran slower
  // beside the others (doc/benchmark-history.md, issue 45's two-CPU section).
  void print_timeline() const {
    uint64_t joined = ~0ull, done = 0;
    for (uint32_t i = 1; i <= kMaxFrameWorkers; ++i) {
      if (helper_joined_[i] && helper_joined_[i] < joined) joined = helper_joined_[i];
      if (helper_done_[i] > done) done = helper_done_[i];
    }
    if (!debug_ || !work_handed_out_ || !done || joined == ~0ull) return;
    serial::print("kpack: decode timeline: first helper joined at %lu, boot CPU done at %lu, helpers done at %lu\n",
                  joined - work_handed_out_, caller_done_ - work_handed_out_, done - work_handed_out_);
  }

 private:
  static void run(void* self, uint32_t index) {
    auto* aps = static_cast<ApplicationProcessors*>(self);
    __atomic_fetch_add(&aps->ran_, 1, __ATOMIC_RELAXED);
    aps->work_(aps->arg_, index);
    aps->helper_done_[index] = rdtsc();
  }

  PhysicalMemory& memory_;
  bool debug_;
  bool stop_first_helper_;
  smp::WakeRequest request_;
  smp::HelperReport report_;
  uint32_t woken_ = 0;
  void (*work_)(void*, uint32_t) = nullptr;
  void* arg_ = nullptr;
  uint32_t ran_ = 0;
  uint32_t returned_ = 0;
  uint64_t tlb_pages_ = 0;  // the boot CPU's grow_emulated_tlb
  uint64_t tlb_cycles_ = 0;
  uint64_t work_handed_out_ = 0;                       // TSC: start()
  uint64_t helper_joined_[kMaxFrameWorkers + 1] = {};  // TSC: each helper's before_decoding
  uint64_t helper_done_[kMaxFrameWorkers + 1] = {};    // TSC: each helper's return from the queue
  uint64_t caller_done_ = 0;
};

// kpack.debug: how deep the boot stack went. The stack is zeros in the image file (.bss is inside
// it), so the bytes still zero at its bottom were never used; tests/smp/smp-boot.sh fails a stub
// that comes near the end, which would run into the data below it (the SMP helpers' state first).
void print_stack_use() {
  const uint8_t* bottom = boot_stack;
  const uint8_t* unused = bottom;
  while (unused < boot_stack_top && *unused == 0) ++unused;
  serial::print("kpack: stack bytes=%lu of %lu\n", static_cast<uint64_t>(boot_stack_top - unused),
                static_cast<uint64_t>(boot_stack_top - bottom));
}

// The platform itself. The helpers are constructed when decoding starts: they need the environment.
class BareMetal final : public BootPlatform {
 public:
  explicit BareMetal(const BootInputs& inputs) : efi_application_(inputs.efi_application) {}

  PhysicalMemory& memory() override { return memory_; }
  RamSource ram_source() const override {
    return efi_application_ ? RamSource::kEfiMapOnly : RamSource::kEfiMapWhenPresent;
  }

  FrameWorkers* start_decoding(const BootInputs& inputs, const StubOptions& options, const BootEnvironment& env,
                               uint32_t* max_workers) override {
    helpers_ = new (helpers_storage_) ApplicationProcessors(inputs, options, env, memory_);
    // Only frames have work for them: a raw kernel is never woken for.
    if (static_cast<Codec>(uint32_t{inputs.packer_record->codec}) != Codec::kRaw) helpers_->wake();
    *max_workers = helpers_->woken();
    return helpers_;
  }

  HelperCounts end_decoding(const UnpackResult&, const StubOptions& options) override {
    helpers_->finish();
    helpers_->print_tlb();
    helpers_->print_timeline();
    if (options.debug) print_stack_use();
    return helpers_->counts();
  }

  StubStatus keep_kernel(const UnpackResult&) override { return StubStatus::success(); }

  bool low_pages(const BootInputs& inputs, const BootEnvironment& env, Range image, uint64_t size,
                 uint64_t* base) override {
    return find_low_pages(*inputs.params, reinterpret_cast<uint64_t>(inputs.params), env, image, size, base);
  }

  uint8_t* run_report_page(const BootEnvironment& env, Range kernel, Range image, uint64_t* address) override {
    if (!place_run_report(env.free, kernel, image, address)) return nullptr;
    return memory_.writable(*address, kRunReportNodeSize);
  }

  StubStatus leave_firmware(const BootInputs&) override { return StubStatus::success(); }

  [[noreturn]] StubStatus fail(StubStatus status, const StubOptions& options) override { stop_boot(status, options); }

 private:
  bool efi_application_;
  IdentityMemory memory_;
  // Placement storage: the stub has no heap, and the helpers need the environment to exist.
  alignas(ApplicationProcessors) uint8_t helpers_storage_[sizeof(ApplicationProcessors)];
  ApplicationProcessors* helpers_ = nullptr;
};

[[noreturn]] void boot_on_bare_metal(const BootInputs& inputs) {
  enable_avx_registers();
  BareMetal platform(inputs);
  halt_with(boot_kernel(inputs, platform));
}

// On the boot stack, from boot_after_firmware: the inputs copied off the firmware's stack first,
// which is free memory to the kernel, then the stub's own identity map (the firmware's tables are
// free memory too).
[[noreturn]] void boot_on_boot_stack(void* firmware_inputs) {
  BootInputs inputs = *static_cast<const BootInputs*>(firmware_inputs);
  write_cr3(build_identity_map(&stub_page_tables, reinterpret_cast<uint64_t>(inputs.image_base), inputs.params,
                               inputs.packer_record->image_size));
  boot_on_bare_metal(inputs);
}

}  // namespace

void boot_after_firmware(const BootInputs& inputs) {
  asm volatile("cli" ::: "memory");
  // Our GDT and exception handlers: the firmware's lie in boot-services memory, which is now free.
  // The GDT reload leaves %fs's base at 0; the canary's is ours.
  load_boot_gdt();
  set_fs_base(stub_tls);
  install_exception_handlers();
  run_on_boot_stack(boot_on_boot_stack, const_cast<BootInputs*>(&inputs));
}

}  // namespace kpack

// entry64.S, for the boot-protocol and PVH entries once prepare_boot_inputs has returned.
extern "C" void boot_from_entry(const kpack::BootInputs* inputs) { kpack::boot_on_bare_metal(*inputs); }
