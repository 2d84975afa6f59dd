// The stub's C++ entry for the boot protocol's 16-, 32- and 64-bit entries: runs the shared boot
// (boot_kernel.cc) on the record entry64.S has checked, with memory through the stub's own
// identity map, and returns the kernel's entry point to entry64.S. Any error halts with one line
// on COM1.
#include "acpi_madt.h"
#include "acpi_rsdp.h"
#include "asm_symbols.h"
#include "boot_environment.h"
#include "boot_kernel.h"
#include "exceptions.h"
#include "halt.h"
#include "kaslr.h"
#include "paging.h"
#include "range.h"
#include "serial.h"
#include "smp.h"

namespace kpack {
namespace {

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

// For now the helpers only prove they ran: each counts itself once. The parallel decode will give
// them the engine's frames instead.
void count_helper(void* counter, uint32_t /*cpu_index*/) {
  __atomic_fetch_add(static_cast<uint32_t*>(counter), 1, __ATOMIC_RELAXED);
}

// Starts the application processors and parks them again before the kernel is unpacked, so they
// are back in wait-for-SIPI, as the firmware left them, when the kernel starts them itself.
// Their stacks come from the top of free memory below 4 GiB, where the engine's work area goes
// later. Trouble is printed with kpack.debug and the boot goes on, on this CPU alone.
void run_helpers(const boot::BootParams& params, uint8_t* image_base, const StubInfo& record, PhysicalMemory& memory) {
  BootEnvironment env;
  if (!read_boot_environment(params, reinterpret_cast<uint64_t>(&params), memory, &env).ok()) return;  // unpack reports it
  const char* text = reinterpret_cast<const char*>(env.command_line.begin);
  uint64_t length = env.command_line.empty() ? 0 : env.command_line.size() - 1;
  bool debug = command_line_has(text, length, "kpack.debug");

  smp::HelperRequest request;
  request.params = &params;
  request.params_addr = reinterpret_cast<uint64_t>(&params);
  request.env = &env;
  request.memory = &memory;
  request.rsdp = params.acpi_rsdp_addr ? uint64_t{params.acpi_rsdp_addr} : find_bios_rsdp(memory);
  request.image = range_of(reinterpret_cast<uint64_t>(image_base), record.image_size);
  uint64_t max_cpus = command_line_number(text, length, "kpack.cpus", kMaxCpus);
  request.max_cpus = static_cast<uint32_t>(max_cpus < kMaxCpus ? max_cpus : kMaxCpus);
  request.break_trampoline = command_line_has(text, length, "kpack.test_broken_trampoline");
  // The highest fit below 4 GiB (the identity map the APs share); none leaves the boot CPU alone.
  uint64_t size = smp::helper_memory_size(request.max_cpus - 1);
  for (uint32_t i = env.free.count(); i-- > 0 && request.max_cpus > 1;) {
    Range r = env.free.at(i);
    if (r.end > (1ull << 32)) r.end = 1ull << 32;
    uint64_t stacks = align_down(r.end - size, 4096);
    if (r.size() >= size && r.end > size && stacks >= r.begin) {
      request.helper_memory = range_of(stacks, size);
      break;
    }
  }
  uint32_t counter = 0;
  request.work = count_helper;
  request.arg = &counter;

  smp::HelperReport report;
  smp::start_helpers(request, &report);
  uint32_t returned = smp::park_helpers();
  if (!debug) return;
  serial::write("kpack: cpus: ");
  serial::write_decimal(report.found);
  serial::write(" found, ");
  serial::write_decimal(report.started);
  serial::write(" started, ");
  serial::write_decimal(__atomic_load_n(&counter, __ATOMIC_RELAXED));
  serial::write(" ran, ");
  serial::write_decimal(returned);
  serial::write(" returned, ");
  serial::write_decimal(report.abandoned);
  serial::write(" late; cycles=");
  serial::write_decimal(report.start_cycles);
  serial::write("\n");
  // Printed as the stub prints its errors, but the boot goes on.
  if (!report.problem.ok()) print_status("kpack: cpus: one CPU: ", report.problem);
}

}  // namespace
}  // namespace kpack

extern "C" uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::StubInfo* record) {
  using namespace kpack;
  BootOptions options;
  options.start_tsc = rdtsc();
  install_exception_handlers();
  IdentityMemory memory;
  run_helpers(*params, image_base, *record, memory);
  UnpackResult result;
  StubStatus status = unpack_for_boot(params, image_base, *record, memory, options, &result);
  if (!status.ok()) halt_with(status);
  return result.entry;
}
