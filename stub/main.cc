// The stub's C++ entry for the boot protocol's 16-, 32- and 64-bit entries: runs the shared boot
// (boot_kernel.cc) on the record entry64.S has checked, with memory through the stub's own
// identity map, and returns the kernel's entry point to entry64.S. Any error halts with one line
// on COM1.
#include "asm_symbols.h"
#include "boot_kernel.h"
#include "exceptions.h"
#include "halt.h"
#include "kaslr.h"
#include "paging.h"
#include "range.h"

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

}  // namespace
}  // namespace kpack

extern "C" uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::StubInfo* record) {
  using namespace kpack;
  BootOptions options;
  options.start_tsc = rdtsc();
  install_exception_handlers();
  IdentityMemory memory;
  UnpackResult result;
  StubStatus status = unpack_for_boot(params, image_base, *record, memory, options, &result);
  if (!status.ok()) halt_with(status);
  return result.entry;
}
