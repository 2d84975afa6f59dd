#include "stub/boot/boot.h"

#include "stub/arch/cpu.h"
#include "stub/machine/boot_environment.h"
#include "stub/arch/entropy.h"
#include "stub/unpack/relocation_table.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/machine/trampoline_page.h"
#include "stub/unpack/xxh3.h"
#include "stub/unpack/packer_record_unpack.h"
#include "stub/boot/boot_asm.h"
#include "stub/runtime/stack_protector.h"

namespace kpack {

namespace {

// Each phase's TSC cycle count goes to the run report and, with kpack.debug on the command line,
// to COM1.
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
KaslrRequest kaslr_request(const Handover& handover, const StubOptions& options, const BootEnvironment& env,
                           PhysicalMemory& memory) {
  KaslrRequest kaslr;
  kaslr.options = options.kaslr;
  if (kaslr.options.disabled) return kaslr;
  const boot::BootParams& params = *handover.params;
  uint64_t state = mix_entropy(0x6b7061636b61736cull, reinterpret_cast<const uint8_t*>(&params), sizeof(params));
  if (const uint8_t* seed = memory.readable(env.rng_seed.begin, env.rng_seed.size()); seed && !env.rng_seed.empty())
    state = mix_entropy(state, seed, env.rng_seed.size());
  const FirmwareFacts& firmware = handover.firmware;
  if (firmware.entropy_size) state = mix_entropy(state, firmware.entropy, firmware.entropy_size);
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

// Memory as the live page tables map it: an identity map wherever the switch is made.
class MappedMemory final : public PhysicalMemory {
 public:
  const uint8_t* readable(uint64_t addr, uint64_t) override { return reinterpret_cast<const uint8_t*>(addr); }
  uint8_t* writable(uint64_t addr, uint64_t) override { return reinterpret_cast<uint8_t*>(addr); }
};

constexpr uint32_t kCpuidLa57 = 1u << 16;  // CPUID 7.ECX

}  // namespace

bool kernel_wants_five_levels(const PackerRecord& record, const StubOptions& options) {
  bool cpu_has_la57 = cpuid(0).eax >= 7 && (cpuid(7).ecx & kCpuidLa57);
  return wants_five_level_paging(record.flags & kStubKernelFiveLevel, cpu_has_la57, options.no_five_level);
}

bool five_level_paging_on() {
  uint64_t cr4;
  asm volatile("mov %%cr4, %0" : "=r"(cr4));
  return cr4 & kCr4La57;
}

StubStatus switch_paging_levels(bool five_levels, uint64_t low_pages) {
  asm volatile("cli" ::: "memory");
  uint64_t cr3;
  asm volatile("mov %%cr3, %0" : "=r"(cr3));
  MappedMemory memory;
  if (!build_switched_root(memory, cr3, five_levels, low_pages))
    return fail("cannot build the page tables for switching the paging levels", low_pages, cr3);
  // The code after the root table; its far jump back to 64-bit code names the copy's address.
  uint8_t* code = reinterpret_cast<uint8_t*>(low_pages + kTrampolinePageSize);
  __builtin_memcpy(code, level_switch_start, level_switch_end - level_switch_start);
  uint8_t* jump_offset = code + (level_switch_far_jump - level_switch_start) + 1;  // after the opcode
  uint32_t offset;
  __builtin_memcpy(&offset, jump_offset, sizeof(offset));
  offset += static_cast<uint32_t>(low_pages + kTrampolinePageSize);
  __builtin_memcpy(jump_offset, &offset, sizeof(offset));
  // Its 32-bit code segment; the GDT reload leaves %fs's base at 0, the canary's is ours.
  load_boot_gdt();
  set_fs_base(stub_tls);
  reinterpret_cast<void (*)(uint32_t)>(code)(static_cast<uint32_t>(low_pages));
  return StubStatus::success();
}

void stop_boot(StubStatus status, const StubOptions& options) {
  if (options.panic_seconds > 0) reset_with(status, static_cast<uint64_t>(options.panic_seconds));
  halt_with(status);
}

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

StubStatus unpack_for_boot(const Handover& handover, const StubOptions& options, const BootResources& resources,
                           UnpackResult* result) {
  boot::BootParams* params = handover.params;
  PhysicalMemory& memory = *resources.memory;
  DebugTrace trace(options.debug, handover.start_tsc, resources.run);
  KaslrRequest kaslr = kaslr_request(handover, options, *resources.env, memory);
  // The kernel randomizes its own memory regions only when told KASLR is on.
  params->hdr.loadflags = static_cast<uint8_t>((params->hdr.loadflags & ~boot::kKaslrFlag) |
                                               (kaslr.options.disabled ? 0 : boot::kKaslrFlag));
  trace.phase("environment", 0);

  // Unpack the kernel straight to where it will run.
  const PackerRecord& record = *handover.packer_record;
  uint64_t base = reinterpret_cast<uint64_t>(handover.image_base);
  StubStatus status = unpack_from_packer_record(record, base, kaslr, resources.env->free, memory, trace, result,
                                                resources.workers, resources.max_workers);
  if (!status.ok()) return status;
  if (options.debug) print_summary(record, base, *result, handover.start_tsc, trace.total());
  return StubStatus::success();
}

}  // namespace kpack
