#include "stub/boot/paging_levels.h"

#include "stub/arch/cpu.h"
#include "stub/boot/boot_asm.h"
#include "stub/machine/trampoline_page.h"
#include "stub/runtime/stack_protector.h"

namespace kpack {
namespace {

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
  return wants_five_level_paging(record.flags & kRecordKernelFiveLevel, cpu_has_la57, options.no_five_level);
}

bool five_level_paging_on() { return read_cr4() & kCr4La57; }

StubStatus switch_paging_levels(bool five_levels, uint64_t low_pages) {
  asm volatile("cli" ::: "memory");
  uint64_t cr3 = read_cr3();
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

}  // namespace kpack
