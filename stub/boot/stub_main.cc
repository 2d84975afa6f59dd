// The stub's C++ entry for the boot protocol's 16-, 32- and 64-bit entries, and for the EFI entries
// once they have left boot services (efi/efi_entry.cc hands over through the 64-bit entry): runs
// the shared boot (stub/boot/boot.cc) on the record entry64.S has checked, with memory through the
// stub's own identity map, and returns the kernel's entry point to entry64.S. Any error halts with
// one line on COM1.
#include "stub/machine/acpi_madt.h"
#include "stub/machine/acpi_rsdp.h"
#include "stub/boot/boot_asm.h"
#include "stub/entry/entry_asm.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/reserved_memory.h"
#include "stub/boot/boot.h"
#include "stub/arch/cpu.h"
#include "stub/arch/emulated_tlb.h"
#include "stub/arch/halt.h"
#include "stub/unpack/kaslr.h"
#include "stub/paging/identity_map.h"
#include "stub/base/range.h"
#include "stub/arch/serial.h"
#include "stub/smp/smp.h"
#include "stub/machine/trampoline_page.h"
#include "stub/arch/vector_registers.h"
#include "stub/unpack/xxh3.h"

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
  ApplicationProcessors(const Handover& handover, const StubOptions& options, const BootEnvironment& env,
                        PhysicalMemory& memory)
      : memory_(memory), debug_(options.debug), stop_first_helper_(options.test_stopped_helper) {
    request_.params = handover.params;
    request_.params_addr = reinterpret_cast<uint64_t>(handover.params);
    request_.env = &env;
    request_.memory = &memory;
    request_.image = range_of(reinterpret_cast<uint64_t>(handover.image_base), handover.packer_record->image_size);
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
    work_ = work, arg_ = arg;
    return smp::start_helpers(&ApplicationProcessors::run, this, count, memory, memory_);
  }

  // Also after a boot that gave them nothing to do (or failed): every woken AP is parked.
  void finish() override { returned_ += smp::park_helpers(&report_); }

  void before_decoding(uint32_t index, uint8_t* ram, uint64_t size, uint64_t working_set) override {
    uint64_t start = rdtsc();
    uint64_t pages = grow_emulated_tlb(ram, size, working_set);
    if (index == 0) tlb_pages_ = pages, tlb_cycles_ = rdtsc() - start;
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

  void print(const UnpackResult& result, const PackerRecord& record) const {
    if (!debug_) return;
    print_helper_counts(counts(), result, record);
    if (tlb_pages_)
      serial::print("kpack: QEMU TCG: software TLB grown, %lu pages touched, cycles=%lu\n", tlb_pages_, tlb_cycles_);
  }

 private:
  static void run(void* self, uint32_t index) {
    auto* aps = static_cast<ApplicationProcessors*>(self);
    __atomic_fetch_add(&aps->ran_, 1, __ATOMIC_RELAXED);
    aps->work_(aps->arg_, index);
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
};

// The ACPI root pointer, as the stock decompressor hands it over behind a boot-protocol loader: on
// a UEFI machine (GRUB's EFI `linux`) the one the firmware's configuration table names, else the
// BIOS's in low memory. (Stock's EFI stub leaves it at 0: the kernel reads the configuration table.)
void store_rsdp(boot::BootParams* params, PhysicalMemory& memory) {
  if (!params->acpi_rsdp_addr) params->acpi_rsdp_addr = find_efi_rsdp(params->efi_info, memory);
  if (!params->acpi_rsdp_addr) params->acpi_rsdp_addr = find_bios_rsdp(memory);
}

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

// kpack.debug: which map free memory came from, so a test can tell the EFI one was used.
void print_ram_source(const BootEnvironment& env) {
  serial::write(env.free_from_efi_map ? "kpack: free memory from the EFI memory map\n"
                                      : "kpack: free memory from e820\n");
}

// The run report in a free page off the kernel and the image: the kernel reserves every setup_data
// node before it allocates anything. No room leaves the boot without one.
void leave_run_report(boot::BootParams* params, const BootEnvironment& env, Range image, const UnpackResult& result,
                      const HelperCounts& helpers, RunReport& run, PhysicalMemory& memory) {
  report_result(run, result, helpers);
  Range kernel = range_of(result.base, result.kernel.span());
  uint64_t address = 0;
  if (!place_run_report(env.free, kernel, image, &address)) return;
  uint8_t* node = memory.writable(address, kRunReportNodeSize);
  if (!node) return;
  link_run_report(*params, address, node, run)->kernel_entry_tsc = rdtsc();
}

// The paging mode the kernel starts in, as the stock decompressor picks it. The switch runs from
// two low pages nothing live holds (the APs are parked by now); without such pages a kernel that
// could have had 5 levels gets 4, but one that cannot run with 5 stops here.
void hand_over_paging_mode(const boot::BootParams& params, const BootEnvironment& env, Range image,
                           const PackerRecord& record, const StubOptions& options) {
  bool five_levels = kernel_wants_five_levels(record, options);
  if (five_levels == five_level_paging_on()) return;
  uint64_t low_pages = 0;
  if (!find_low_pages(params, reinterpret_cast<uint64_t>(&params), env, image, kLevelSwitchSize, &low_pages)) {
    if (five_levels) return;
    stop_boot(fail("no free low memory to leave 5-level paging for a kernel without it", 0, kLevelSwitchSize), options);
  }
  StubStatus status = switch_paging_levels(five_levels, low_pages);
  if (!status.ok()) stop_boot(status, options);
}

// The common boot path every entry hands over to, after the firmware: memory through the stub's own
// identity map, the application processors as helpers, and any error halts with its line on COM1.
// Returns the kernel's entry point.
uint64_t stub_main(const Handover& handover) {
  RunReport run =
      start_run_report(static_cast<Codec>(uint32_t{handover.packer_record->codec}), handover.entry, handover.start_tsc);
  enable_avx_registers();
  IdentityMemory memory;
  boot::BootParams* params = handover.params;
  uint8_t* image_base = handover.image_base;
  const PackerRecord& record = *handover.packer_record;
  BootEnvironment env;
  StubStatus status =
      read_boot_environment(*params, reinterpret_cast<uint64_t>(params), memory, &env,
                            handover.efi_application ? RamSource::kEfiMapOnly : RamSource::kEfiMapWhenPresent,
                            reinterpret_cast<uint64_t>(image_base));
  if (!status.ok()) halt_with(status);
  StubOptions options = read_stub_options(env);
  // Nothing the stub places, the kernel included, may land where the command line keeps memory
  // from the kernel (memmap=, mem=).
  status = keep_command_line_memory(options.kaslr, env);
  if (!status.ok()) stop_boot(status, options);
  if (options.debug) serial::print("kpack: entered by %s\n", run_entry_name(handover.entry));
  if (options.debug) print_ram_source(env);
  if (!handover.efi_application) store_rsdp(params, memory);
  ApplicationProcessors helpers(handover, options, env, memory);
  // Only frames have work for them: a raw kernel is never woken for.
  if (static_cast<Codec>(uint32_t{record.codec}) != Codec::kRaw) helpers.wake();
  BootResources resources{&memory, &env, &helpers, helpers.woken(), &run};
  UnpackResult result;
  status = unpack_for_boot(handover, options, resources, &result);
  helpers.finish();
  if (!status.ok()) stop_boot(status, options);
  helpers.print(result, record);
  if (options.debug) print_stack_use();
  // Both keep off the loaded image: the paging switch's low pages and the run report's page.
  Range image = range_of(reinterpret_cast<uint64_t>(image_base), record.image_size);
  hand_over_paging_mode(*params, env, image, record, options);
  leave_run_report(params, env, image, result, helpers.counts(), run, memory);
  return result.entry;
}

}  // namespace
}  // namespace kpack

// entry64.S, for every entry once it runs on the stub's identity map (boot_asm.h).
extern "C" uint64_t stub_entry(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::PackerRecord* record,
                               uint32_t entry, const kpack::FirmwareFacts* firmware) {
  using namespace kpack;
  Handover handover;
  handover.start_tsc = rdtsc();
  handover.params = params;
  handover.image_base = image_base;
  handover.packer_record = record;
  handover.entry = static_cast<RunEntry>(entry);
  if (firmware) {
    // A copy before anything is decoded: the EFI entry's page is free memory to the kernel.
    handover.firmware = *firmware;
    handover.efi_application = true;
    handover.entry = firmware->entry;
    handover.start_tsc = firmware->start_tsc;
  }
  return stub_main(handover);
}
