// Firmware that maps free memory non-executable (NX_COMPAT images, UEFI 2.10's
// EFI_MEMORY_ATTRIBUTE_PROTOCOL) would fault at the kernel's first instruction: the kernel's text
// is made read-only and executable on the firmware's page tables, as the Linux EFI stub does
// (efi_adjust_memory_range_protection in drivers/firmware/efi/libstub/x86-stub.c).
#include "formats/elf64.h"
#include "stub/efi/efi_boot.h"

namespace kpack::efi {

EfiStatus protect_kernel_text(const Firmware& fw, const UnpackResult& result) {
  auto* attributes = locate_protocol<MemoryAttribute, kMemoryAttributeProtocol>(fw);
  if (!attributes) return kSuccess;
  const KernelHeaders& kernel = result.kernel;
  for (uint32_t i = 0; i < kernel.segment_count; ++i) {
    const LoadSegment& segment = kernel.segments[i];
    if (!(segment.flags & elf::kPfX)) continue;
    // Where the segment went: the kernel's lowest segment sits at result.base.
    uint64_t begin = result.base + (segment.paddr - kernel.physical.begin);
    uint64_t end = (begin + segment.memsz + kPageSize - 1) & ~(kPageSize - 1);
    begin &= ~(kPageSize - 1);
    EfiStatus status = attributes->set_memory_attributes(attributes, begin, end - begin, kMemoryRo);
    if (!failed(status)) status = attributes->clear_memory_attributes(attributes, begin, end - begin, kMemoryXp);
    if (failed(status)) return status;
  }
  return kSuccess;
}

}  // namespace kpack::efi
