// The one boot path (boot_kernel.h). Each phase's TSC cycle count goes to the run report and, with
// kpack.debug on the command line, to COM1.
#include "stub/boot/boot_kernel.h"

#include "stub/arch/cpu.h"
#include "stub/arch/entropy.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/boot/boot_asm.h"
#include "stub/boot/paging_levels.h"
#include "stub/machine/acpi_rsdp.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/reserved_memory.h"
#include "stub/machine/trampoline_page.h"
#include "formats/relocation_table.h"
#include "stub/unpack/kaslr.h"
#include "stub/unpack/packer_record_unpack.h"
#include "stub/unpack/xxh3.h"

namespace kpack {
namespace {

class DebugTrace final : public UnpackTrace {
 public:
  DebugTrace(bool enabled, uint64_t start, RunReport* run)
      : enabled_(enabled), last_(start), start_(start), run_(run) {}
  void phase(const char* name, uint64_t bytes) override {
    uint64_t now = rdtsc();
    if (enabled_) serial::print("kpack: %s bytes=%lu cycles=%lu\n", name, bytes, now - last_);
    if (run_) report_phase(*run_, name, bytes, now - last_);
    last_ = now;
  }
  uint64_t total() const { return last_ - start_; }

 private:
  bool enabled_;
  uint64_t last_;
  uint64_t start_;
  RunReport* run_;
};

// KASLR as the stock decompressor does it unless the command line says nokaslr: both bases drawn
// from boot_params, QEMU's SETUP_RNG_SEED node (read, never changed), the entry's own entropy
// (EFI_RNG_PROTOCOL) and the CPU's.
KaslrRequest kaslr_request(const BootInputs& inputs, const StubOptions& options, const BootEnvironment& env,
                           PhysicalMemory& memory) {
  KaslrRequest kaslr;
  kaslr.options = options.kaslr;
  if (kaslr.options.disabled) return kaslr;
  const boot::BootParams& params = *inputs.params;
  uint64_t state = mix_entropy(0x6b7061636b61736cull, reinterpret_cast<const uint8_t*>(&params), sizeof(params));
  if (const uint8_t* seed = memory.readable(env.rng_seed.begin, env.rng_seed.size()); seed && !env.rng_seed.empty())
    state = mix_entropy(state, seed, env.rng_seed.size());
  if (inputs.entropy_size) state = mix_entropy(state, inputs.entropy, inputs.entropy_size);
  state = mix_cpu_entropy(state);
  kaslr.physical = kaslr.virtual_base = true;
  kaslr.physical_random = mix_entropy(state, 1);
  kaslr.virtual_random = mix_entropy(state, 2);
  return kaslr;
}

// `start`: the TSC when the stub began; under QEMU's -icount, the instructions since reset that
// the firmware, the loader and the 16-bit setup ran before it.
void print_summary(const PackerRecord& record, uint64_t base, const UnpackResult& result, uint64_t start,
                   uint64_t cycles) {
  serial::print(
      "kpack: %s image at %lx, kernel at %lx%s, physical slots %lu%s, virtual base %lx (offset %lx of %lu slots, "
      "%lu relocations), entry %lx, total cycles=%lu, started at tsc=%lu\n",
      codec_name(static_cast<Codec>(uint32_t{record.codec})), base, result.base, result.in_place ? " (in place)" : "",
      uint64_t{result.physical_slots}, result.physical_fallback ? " (none fit: lowest fit)" : "",
      kStartKernelMap + result.kernel.physical.begin + result.virtual_offset, result.virtual_offset,
      uint64_t{result.virtual_slots}, uint64_t{result.relocations}, result.entry, cycles, start);
}

// One line with kpack.debug: what was found and started, who decoded the frames, and which XXH3
// build proved them; then the problem, if any.
void print_helper_counts(const HelperCounts& counts, const UnpackResult& result, const PackerRecord& record) {
  bool xxh3 = uint32_t{record.digest} == static_cast<uint32_t>(FrameDigest::kXxh3);
  serial::print(
      "kpack: cpus: %lu found, %lu started, %lu ran, %lu returned, %lu late; cycles=%lu; frames: %lu, %lu by "
      "helpers, %lu redone%s%s\n",
      counts.found, counts.started, counts.ran, counts.returned, counts.late, counts.join_cycles,
      uint64_t{result.frames}, uint64_t{result.frames - result.frames_by_caller}, uint64_t{result.redone},
      xxh3 ? "; XXH3 with " : "", xxh3 ? xxh3_build_name(xxh3_build_for_this_cpu()) : "");
  if (!counts.problem.ok()) print_status("kpack: cpus: one CPU: ", counts.problem);
}

// The ACPI root pointer, as the stock decompressor hands it over behind a boot-protocol loader: on
// a UEFI machine (GRUB's EFI `linux`) the one the firmware's configuration table names, else the
// BIOS's in low memory. (Stock's EFI stub leaves it at 0: the kernel reads the configuration table.)
void store_rsdp(boot::BootParams* params, PhysicalMemory& memory) {
  if (!params->acpi_rsdp_addr) params->acpi_rsdp_addr = find_efi_rsdp(params->efi_info, memory);
  if (!params->acpi_rsdp_addr) params->acpi_rsdp_addr = find_bios_rsdp(memory);
}

// kpack.debug: which entry ran and how often the stub checked its record and relocated itself (1
// each: the boot tests hold every entry to it), and which map free memory came from.
void print_entry(const BootInputs& inputs, const BootEnvironment& env) {
  serial::print("kpack: entered by %s; record checks %lu, relocation passes %lu\n", run_entry_name(inputs.entry),
                uint64_t{inputs.record_checks}, uint64_t{inputs.relocation_passes});
  serial::write(env.free_from_efi_map ? "kpack: free memory from the EFI memory map\n"
                                      : "kpack: free memory from e820\n");
}

// The options on the command line read_boot_environment found.
StubOptions read_stub_options(const BootEnvironment& env) {
  return parse_stub_options(reinterpret_cast<const char*>(env.command_line.begin),
                            env.command_line.empty() ? 0 : env.command_line.size() - 1);
}

uint64_t address_of(const void* pointer) { return reinterpret_cast<uint64_t>(pointer); }

}  // namespace

void stop_boot(StubStatus status, const StubOptions& options) {
  if (options.panic_seconds > 0) reset_with(status, static_cast<uint64_t>(options.panic_seconds));
  halt_with(status);
}

StubStatus boot_kernel(const BootInputs& inputs, BootPlatform& platform) {
  const PackerRecord& record = *inputs.packer_record;
  boot::BootParams* params = inputs.params;
  PhysicalMemory& memory = platform.memory();
  RunReport run = start_run_report(static_cast<Codec>(uint32_t{record.codec}), inputs.entry, inputs.start_tsc);
  StubOptions options = inputs.options;
  BootEnvironment env;
  StubStatus status = read_boot_environment(*params, address_of(params), memory, &env, platform.ram_source(),
                                            address_of(inputs.image_base));
  if (!status.ok()) return platform.fail(status, options);
  if (!inputs.options_read) options = read_stub_options(env);
  // Nothing the stub places, the kernel included, may land where the command line keeps memory
  // from the kernel (memmap=, mem=).
  status = keep_command_line_memory(options.kaslr, env);
  if (!status.ok()) return platform.fail(status, options);
  if (options.debug) print_entry(inputs, env);
  if (!inputs.efi_application) store_rsdp(params, memory);

  DebugTrace trace(options.debug, inputs.start_tsc, &run);
  KaslrRequest kaslr = kaslr_request(inputs, options, env, memory);
  // The kernel randomizes its own memory regions only when told KASLR is on.
  params->hdr.loadflags = static_cast<uint8_t>((params->hdr.loadflags & ~boot::kKaslrFlag) |
                                               (kaslr.options.disabled ? 0 : boot::kKaslrFlag));
  trace.phase("environment", 0);
  // Unpack the kernel straight to where it will run.
  uint32_t max_workers = 0;
  FrameWorkers* workers = platform.start_decoding(inputs, options, env, &max_workers);
  uint64_t base = address_of(inputs.image_base);
  UnpackResult result;
  status = unpack_from_packer_record(record, base, kaslr, env.free, memory, trace, &result, workers, max_workers);
  HelperCounts helpers = platform.end_decoding(result, options);
  if (status.ok()) status = platform.keep_kernel(result);
  if (!status.ok()) return platform.fail(status, options);
  if (options.debug) print_summary(record, base, result, inputs.start_tsc, trace.total());
  if (options.debug) print_helper_counts(helpers, result, record);

  // Both keep off the loaded image: the paging switch's low pages and the run report's page. Without
  // low pages a kernel that could have had 5 levels gets 4, but one that cannot run with 5 stops.
  Range image = range_of(base, record.image_size);
  bool five_levels = kernel_wants_five_levels(record, options);
  uint64_t low_pages = 0;
  if (five_levels != five_level_paging_on() && !platform.low_pages(inputs, env, image, kLevelSwitchSize, &low_pages) &&
      !five_levels)
    return platform.fail(
        fail("no free low memory to leave 5-level paging for a kernel without it", 0, kLevelSwitchSize), options);
  uint64_t report_address = 0;
  uint8_t* report_node =
      platform.run_report_page(env, range_of(result.base, result.kernel.span()), image, &report_address);
  status = platform.leave_firmware(inputs);
  if (status.ok() && low_pages) status = switch_paging_levels(five_levels, low_pages);
  if (!status.ok()) return platform.fail(status, options);
  // The kernel reserves every setup_data node before it allocates anything.
  report_result(run, result, helpers);
  if (report_node) link_run_report(*params, report_address, report_node, run)->kernel_entry_tsc = rdtsc();
  enter_kernel(result.entry, params);
}

}  // namespace kpack
