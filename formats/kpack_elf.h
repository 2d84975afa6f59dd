// kpack's ELF output (kpack --elf), for the VMMs that boot an x86 kernel as an ELF file: QEMU -kernel
// (pc and microvm) and Cloud Hypervisor through the PVH note, Firecracker through it or, without
// PVH, at e_entry with the Linux 64-bit boot protocol. The file is one page of headers, then (at a
// file offset congruent to its address modulo kElfLoadAlign) the protected-mode part of a kpack
// image, byte for byte what a bzImage carries after its setup sectors, as its only PT_LOAD.
#pragma once

#include <stddef.h>

#include "formats/elf64.h"
#include "formats/le.h"

namespace kpack {

// The headers' page: the protected-mode part starts at or after it in the file.
inline constexpr uint64_t kElfHeaderPage = 0x1000;
// rust-vmm/linux-loader refuses a PT_LOAD with file bytes whose p_align is not a multiple of 2 MiB
// (KERNEL_SEGMENT_ALIGN, src/loader/elf/mod.rs); the ELF specification then wants p_offset
// congruent to p_vaddr modulo p_align.
inline constexpr uint64_t kElfLoadAlign = 0x200000;
// Where a compressed image goes when it fits below the kernel's floor: the first page above 2 MiB
// that is congruent to the header page, so the file needs no padding. Below it lie the BIOS areas
// and what every VMM puts under 1 MiB (hvm_start_info, the command line, page tables).
inline constexpr uint64_t kElfLowLoadAddress = kElfLoadAlign + kElfHeaderPage;

// kpack's own note, after Xen's in the PT_NOTE: where the PackerRecord lies in the segment, for the
// host tools (a bzImage says it with kernel_info_offset). Loaders skip it: QEMU and rust-vmm stop
// at the Xen note, which comes first.
inline constexpr char kKpackNoteName[8] = {'k', 'p', 'a', 'c', 'k', '\0', '\0', '\0'};  // namesz 6
inline constexpr uint32_t kKpackNoteNameSize = 6;
inline constexpr uint32_t kKpackNotePackerRecord = 1;
struct KpackNote {
  elf::Nhdr header;  // namesz 6, descsz 8, type kKpackNotePackerRecord
  char name[8];
  ul64 packer_record_offset;  // from the start of the PT_LOAD's bytes (the protected-mode part)
};
static_assert(sizeof(KpackNote) == 28);
static_assert(offsetof(KpackNote, name) == 12);
static_assert(offsetof(KpackNote, packer_record_offset) == 20);

// The headers as kpack writes them at file offset 0; the rest of the page is zeros.
struct KpackElfHeaders {
  elf::Ehdr ehdr;       // ELF64, little-endian, ET_EXEC, x86-64; e_entry = load address + 0x200
  elf::Phdr load;       // PT_LOAD RWX: the protected-mode part at its physical address
  elf::Phdr note;       // PT_NOTE over the two notes, p_align 4
  elf::XenPvhNote pvh;  // the PVH entry: load address + StubLayout::pvh_entry
  KpackNote kpack;      // the record's offset
};
static_assert(sizeof(KpackElfHeaders) == 228);
static_assert(offsetof(KpackElfHeaders, load) == 64);
static_assert(offsetof(KpackElfHeaders, note) == 120);
static_assert(offsetof(KpackElfHeaders, pvh) == 176);
static_assert(offsetof(KpackElfHeaders, kpack) == 200);
static_assert(offsetof(KpackElfHeaders, pvh) % elf::kNoteAlign == 0 &&
              offsetof(KpackElfHeaders, kpack) % elf::kNoteAlign == 0);
// QEMU -kernel takes any file with "HdrS" at 0x202 for a bzImage (hw/i386/x86-common.c,
// x86_load_linux): the headers end before it, and the zeros after them hold no signature.
static_assert(sizeof(KpackElfHeaders) <= 0x202);
static_assert(sizeof(KpackElfHeaders) <= kElfHeaderPage);

}  // namespace kpack
