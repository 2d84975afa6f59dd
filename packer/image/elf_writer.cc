// kpack --elf. What the loaders need, and where it comes from:
//   - rust-vmm/linux-loader (Firecracker, Cloud Hypervisor), src/loader/elf/mod.rs: ELF magic,
//     little-endian, e_phentsize 56, e_phoff >= 64, e_entry >= the VMM's high memory (1 MiB), every
//     PT_LOAD with file bytes at p_paddr with p_align a multiple of 2 MiB, the PVH entry from the
//     first "Xen" note of type 18 (descriptor >= 4 bytes);
//   - QEMU -kernel (pc: the pvh.bin option ROM; microvm: qboot), hw/i386/x86-common.c: no "HdrS" at
//     0x202 and no multiboot header in the first 8 KiB, else it loads something else; e_flags
//     without 0x00010004; the note found by type, its descriptor read as a size_t (8 bytes) after
//     the name aligned to the PT_NOTE's p_align (include/hw/elf_ops.h.inc).
// Both load p_filesz bytes at p_paddr and leave the rest of p_memsz zero.
#include "packer/image/elf_writer.h"

#include <cstring>

#include "formats/boot_params.h"
#include "formats/kpack_elf.h"
#include "packer/base/byte_io.h"
#include "stub/base/range.h"
#include "stub/unpack/kernel_headers.h"

namespace kpack {
namespace {

constexpr uint64_t kPageSize = 4096;

// The file offset congruent to `address` modulo kElfLoadAlign, past the header page.
uint64_t file_offset_for(uint64_t address) {
  uint64_t offset = address % kElfLoadAlign;
  return offset < kElfHeaderPage ? offset + kElfLoadAlign : offset;
}

elf::Ehdr file_header(uint64_t entry) {
  elf::Ehdr h{};
  std::memcpy(h.ident, elf::kMagic, sizeof(elf::kMagic));
  h.ident[elf::kIdentClass] = elf::kClass64;
  h.ident[elf::kIdentData] = elf::kDataLittle;
  h.ident[elf::kIdentVersion] = elf::kVersionCurrent;
  h.type = elf::kTypeExec;
  h.machine = elf::kMachineX86_64;
  h.version = elf::kVersionCurrent;
  h.entry = entry;
  h.phoff = offsetof(KpackElfHeaders, load);
  h.ehsize = sizeof(elf::Ehdr);
  h.phentsize = sizeof(elf::Phdr);
  h.phnum = 2;
  h.shentsize = sizeof(elf::Shdr);
  return h;
}

KpackElfHeaders headers(const ProtectedPart& part, const ElfLoad& load) {
  KpackElfHeaders h{};
  h.ehdr = file_header(load.address + boot::kEntry64Offset);
  // RWX: the stub runs its code and writes its data, stack and page tables in place.
  h.load.type = elf::kPtLoad;
  h.load.flags = elf::kPfR | elf::kPfW | elf::kPfX;
  h.load.offset = load.file_offset;
  h.load.vaddr = load.address;
  h.load.paddr = load.address;
  h.load.filesz = part.bytes.size();
  h.load.memsz = part.memory_size;
  h.load.align = kElfLoadAlign;
  // The notes lie in the header page, which nothing loads: no address, no memory size.
  h.note.type = elf::kPtNote;
  h.note.flags = elf::kPfR;
  h.note.offset = offsetof(KpackElfHeaders, pvh);
  h.note.filesz = sizeof(elf::XenPvhNote) + sizeof(KpackNote);
  h.note.align = elf::kNoteAlign;
  h.pvh.header.namesz = sizeof(elf::kXenNoteName);
  h.pvh.header.descsz = sizeof(h.pvh.entry);
  h.pvh.header.type = elf::kXenElfnotePhys32Entry;
  std::memcpy(h.pvh.name, elf::kXenNoteName, sizeof(h.pvh.name));
  h.pvh.entry = load.address + part.stub.pvh_entry;
  h.kpack.header.namesz = kKpackNoteNameSize;
  h.kpack.header.descsz = sizeof(h.kpack.packer_record_offset);
  h.kpack.header.type = kKpackNotePackerRecord;
  std::memcpy(h.kpack.name, kKpackNoteName, sizeof(h.kpack.name));
  h.kpack.packer_record_offset = part.packer_record_offset;
  return h;
}

// The stub's PVH entry must be a place of its own in the 32-bit code: not startup_32 (which takes
// ESI = boot_params), not the 64-bit entry, not the layout block.
bool plausible_pvh_entry(const StubLayout& stub) {
  uint64_t entry = stub.pvh_entry;
  return entry != 0 && entry != boot::kEntry64Offset && entry < stub.rodata_start &&
         !range_of(kStubLayoutOffset, sizeof(StubLayout)).contains(range_of(entry, 1));
}

}  // namespace

const char* elf_placement_name(ElfPlacement placement) {
  switch (placement) {
    case ElfPlacement::kKernelInPlace: return "raw kernel in place";
    case ElfPlacement::kBelowFloor: return "below the kernel's floor";
    case ElfPlacement::kAboveKernel: return "above the kernel";
  }
  return "unknown";
}

ElfLoad choose_elf_load(const ProtectedPart& part, bool raw, uint64_t floor, uint64_t kernel_span) {
  ElfLoad load;
  // Raw: the first segment on the floor, so the kernel runs where it was loaded (the stub moves
  // only the later segments up over the gaps), as GRUB's BIOS linux does with pref_address.
  if (raw && floor >= kLowestSegmentAddress + part.kernel_offset) {
    load.address = floor - part.kernel_offset;
    load.placement = ElfPlacement::kKernelInPlace;
  } else if (!raw && kElfLowLoadAddress + part.memory_size <= floor) {
    // Compressed: below the floor, where it costs no RAM the kernel's own [floor, floor + span)
    // does not already need; stock under QEMU -kernel sits at 1 MiB and needs as much.
    load.address = kElfLowLoadAddress;
    load.placement = ElfPlacement::kBelowFloor;
  } else {
    // Past everything the kernel needs with nokaslr; KASLR draws around it.
    load.address = align_up(floor + kernel_span, kElfLoadAlign) + kElfHeaderPage;
    load.placement = ElfPlacement::kAboveKernel;
  }
  load.file_offset = file_offset_for(load.address);
  return load;
}

Result<ElfImage> build_elf_image(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                 const ImageBlobs& blobs) {
  // An ELF loader puts the segment at its p_paddr, so a raw kernel is laid out in place right after
  // the stub and loaded with its first segment on the floor: every segment, bss included, lies
  // where it runs (the stub moves and zeroes nothing); the bzImage's in-place hole would only cost
  // the file. Compact, the stub would move most of the kernel up over the gaps and zero its bss.
  PackOptions elf_options = options;
  elf_options.raw_layout = RawLayout::kInPlaceAfterStub;
  ProtectedPart part = KPACK_TRY_RESULT(build_protected_part(ctx, input, elf_options, blobs));
  if (!plausible_pvh_entry(part.stub))
    return ctx.about_output("internal error: this kpack's stub has no PVH entry (layout block says " +
                            hex(part.stub.pvh_entry) + ")");
  const bool raw = options.compress.codec == Codec::kRaw;
  ElfImage out;
  out.load = choose_elf_load(part, raw, kernel_floor(input, options), input.kernel.span());
  // The PVH entry is a 32-bit address, and the stub maps and places below 4 GiB.
  if (out.load.address + part.memory_size > kHighestSegmentEnd)
    return ctx.about_output("the image would be loaded at " + hex(out.load.address) + " and end past 4 GiB");
  if (out.load.address % kPageSize) return ctx.about_output("internal error: ELF load address not page-aligned");
  out.bytes.assign(out.load.file_offset + part.bytes.size(), 0);
  put(out.bytes, 0, headers(part, out.load));
  std::memcpy(out.bytes.data() + out.load.file_offset, part.bytes.data(), part.bytes.size());
  return out;
}

}  // namespace kpack
