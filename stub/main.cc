// The stub's C++ entry: gathers what the loader handed over, runs the unpack engine on the record
// entry64.S has checked, and returns the kernel's entry point to entry64.S. Any error halts with
// one line on COM1.
#include "acpi_rsdp.h"
#include "asm_symbols.h"
#include "boot_environment.h"
#include "entropy.h"
#include "exceptions.h"
#include "halt.h"
#include "paging.h"
#include "relocation_table.h"
#include "serial.h"
#include "stub_record.h"

namespace kpack {
namespace {

uint64_t rdtsc() {
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return lo | uint64_t{hi} << 32;
}

// The CPU's physical address width (CPUID 0x80000008), capped at MAXMEM: nothing above it can be
// mapped without setting reserved bits in a page-table entry.
uint64_t physical_address_limit() {
  uint32_t eax = 0x80000000, ebx, ecx, edx;
  asm volatile("cpuid" : "+a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx));
  if (eax < 0x80000008) return 1ull << 36;
  eax = 0x80000008;
  asm volatile("cpuid" : "+a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx));
  uint64_t limit = 1ull << (eax & 0xFF);
  return limit < kMaxPhysicalAddress ? limit : kMaxPhysicalAddress;
}

// Physical memory as the stub sees it: the identity map of 0..4 GiB, plus 1 GiB windows mapped on
// demand above it (setup_data, or a kernel placed high by KASLR).
class IdentityMemory final : public PhysicalMemory {
 public:
  const uint8_t* readable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }

 private:
  uint8_t* pointer(uint64_t addr, uint64_t size) {
    Range wanted = range_of(addr, size);
    if ((wanted.empty() && size) || wanted.end > limit_) return nullptr;
    if (!identity_mapped(addr, size) && !map_identity(addr, size)) return nullptr;
    return reinterpret_cast<uint8_t*>(addr);
  }
  uint64_t limit_ = physical_address_limit();
};

// With kpack.debug on the command line, each phase prints its TSC cycle count.
class DebugTrace final : public UnpackTrace {
 public:
  DebugTrace(bool enabled, uint64_t start) : enabled_(enabled), last_(start), start_(start) {}
  void phase(const char* name, uint64_t bytes) override {
    uint64_t now = rdtsc();
    if (enabled_) {
      serial::write("kpack: ");
      serial::write(name);
      serial::write(" bytes=");
      serial::write_decimal(bytes);
      serial::write(" cycles=");
      serial::write_decimal(now - last_);
      serial::write("\n");
    }
    last_ = now;
  }
  uint64_t total() const { return last_ - start_; }

 private:
  bool enabled_;
  uint64_t last_;
  uint64_t start_;
};

const char* command_line_text(const BootEnvironment& env) {
  return reinterpret_cast<const char*>(env.command_line.begin);
}
uint64_t command_line_length(const BootEnvironment& env) {
  return env.command_line.empty() ? 0 : env.command_line.size() - 1;
}

// KASLR as the stock decompressor does it unless the command line says nokaslr: both bases drawn
// from boot_params, QEMU's SETUP_RNG_SEED node (read, never changed) and the CPU's entropy.
KaslrRequest kaslr_request(const boot::BootParams& params, const BootEnvironment& env, IdentityMemory& memory) {
  KaslrRequest kaslr;
  kaslr.options = parse_kaslr_options(command_line_text(env), command_line_length(env));
  if (kaslr.options.disabled) return kaslr;
  uint64_t state = mix_entropy(0x6b7061636b61736cull, reinterpret_cast<const uint8_t*>(&params), sizeof(params));
  if (const uint8_t* seed = memory.readable(env.rng_seed.begin, env.rng_seed.size()); seed && !env.rng_seed.empty())
    state = mix_entropy(state, seed, env.rng_seed.size());
  state = mix_cpu_entropy(state);
  kaslr.physical = kaslr.virtual_base = true;
  kaslr.physical_random = mix_entropy(state, 1);
  kaslr.virtual_random = mix_entropy(state, 2);
  return kaslr;
}

// `start`: the TSC when the stub began; under QEMU's -icount, the instructions since reset that
// the firmware, the loader and the 16-bit setup ran before it.
void print_summary(const StubInfo& record, uint64_t base, const UnpackResult& result, uint64_t start, uint64_t cycles) {
  serial::write("kpack: ");
  serial::write(codec_name(static_cast<Codec>(uint32_t{record.codec})));
  serial::write(" image at ");
  serial::write_hex(base);
  serial::write(", kernel at ");
  serial::write_hex(result.base);
  serial::write(result.in_place ? " (in place)" : "");
  serial::write(", physical slots ");
  serial::write_decimal(result.physical_slots);
  serial::write(result.physical_fallback ? " (none fit: lowest fit)" : "");
  serial::write(", virtual base ");
  serial::write_hex(kStartKernelMap + result.kernel.physical.begin + result.virtual_offset);
  serial::write(" (offset ");
  serial::write_hex(result.virtual_offset);
  serial::write(" of ");
  serial::write_decimal(result.virtual_slots);
  serial::write(" slots, ");
  serial::write_decimal(result.relocations);
  serial::write(" relocations)");
  serial::write(", entry ");
  serial::write_hex(result.entry);
  serial::write(", total cycles=");
  serial::write_decimal(cycles);
  serial::write(", started at tsc=");
  serial::write_decimal(start);
  serial::write("\n");
}

}  // namespace
}  // namespace kpack

extern "C" uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::StubInfo* record) {
  using namespace kpack;
  uint64_t start = rdtsc();
  install_exception_handlers();

  // What the loader handed over: usable RAM minus everything live.
  IdentityMemory memory;
  BootEnvironment env;
  StubStatus status = read_boot_environment(*params, reinterpret_cast<uint64_t>(params), memory, &env);
  if (!status.ok()) halt_with(status);
  bool debug = command_line_has(command_line_text(env), command_line_length(env), "kpack.debug");
  DebugTrace trace(debug, start);
  KaslrRequest kaslr = kaslr_request(*params, env, memory);
  // The kernel randomizes its own memory regions only when told KASLR is on.
  params->hdr.loadflags = static_cast<uint8_t>((params->hdr.loadflags & ~boot::kKaslrFlag) |
                                               (kaslr.options.disabled ? 0 : boot::kKaslrFlag));
  // The ACPI root pointer, as the stock decompressor hands it over. Under EFI the kernel takes it
  // from the firmware's configuration table instead, and efi_info's signature says we are there.
  if (!params->acpi_rsdp_addr && load_le<uint32_t>(params->efi_info) == 0)
    params->acpi_rsdp_addr = find_bios_rsdp(memory);
  trace.phase("environment", 0);

  // Unpack the kernel straight to where it will run.
  uint64_t base = reinterpret_cast<uint64_t>(image_base);
  uint64_t record_offset = reinterpret_cast<const uint8_t*>(record) - image_base;
  UnpackResult result;
  status = unpack_from_record(*record, record_offset, base, kaslr, env.free, memory, trace, &result);
  if (!status.ok()) halt_with(status);
  if (debug) print_summary(*record, base, result, start, trace.total());
  return result.entry;
}
