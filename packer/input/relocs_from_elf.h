// The kernel's relocation table computed from a vmlinux's .rela.* sections, as the kernel's own
// arch/x86/tools/relocs makes arch/x86/boot/compressed/vmlinux.relocs from the same file.
//
// Which vmlinux files carry .rela.* sections: a CONFIG_RELOCATABLE kernel is linked with
// --emit-relocs, and the build tree's vmlinux keeps them up to 6.4; from 6.5 the final vmlinux is
// stripped of them ("x86/build: Avoid relocation information in final vmlinux"), and from 6.15
// kbuild keeps the unstripped file as vmlinux.unstripped.
//
// The rules, for every SHT_RELA section whose target section is allocated and not a note:
//   - relocations against undefined symbols and R_X86_64_NONE are skipped;
//   - R_X86_64_64 goes to the 64-bit list, R_X86_64_32 and R_X86_64_32S to the 32-bit list, each
//     as the low 32 bits of r_offset, which must sign-extend back to it;
//   - against an absolute symbol they are skipped when the symbol's value is known to be constant
//     (S_ABS: __crc_*, VDSO*, __kcfi_typeid_*, xen_*_direct_reloc, xen_elfnote_*_offset), listed
//     when the linker merely marked a section-relative symbol absolute (S_REL: _end,
//     __init_begin, __start___ksymtab, jiffies, ...), and an error otherwise;
//   - PC-relative relocations (PC32, PLT32, PC64, REX_GOTPCRELX) need nothing, except in the
//     format with the inverse-32 list (up to 6.14) on an SMP kernel, whose .data..percpu section
//     is linked at address 0: there PC32/PLT32 against a per-CPU symbol go to the inverse-32 list,
//     absolute relocations against one are skipped (its value is an offset into the per-CPU area),
//     PC64 against one is an error, and the addresses of relocations inside .data..percpu are
//     moved by __per_cpu_load (where its initial copy sits in the image);
//   - from 6.15, an absolute relocation in .head.text is an error (that code runs before the
//     kernel is relocated), as is any relocation type not named above;
//   - each list is sorted ascending.
// The union of the symbol lists of 6.1 and 6.15+ is used: a name added to S_ABS or S_REL in one
// version only ever turns what another version rejects into a result, so for any kernel its own
// tool accepted, the table is the one that tool made. One exception: relocs ignores relocations
// in note sections only since a fix that stable kernels got as updates (Debian's 6.1.192 has it);
// kpack always ignores them, so for a kernel built before the fix its table lacks the notes'
// entries (values only loaders read, before the kernel runs).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "formats/elf64.h"
#include "packer/input/relocs_table.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

// The table for `elf` in `format`, or nothing when the file has no relocations for its .text
// section (a stripped vmlinux: from 6.5 the final one keeps only the few .rela sections the strip
// patterns miss, such as .relaruntime_*, which alone would make an incomplete table). A malformed
// file or a relocation the kernel's tool would reject is an error.
Result<std::optional<RelocationLists>> relocs_from_elf(const FileView& elf, RelocationFormat format);

// The format the kernel in `elf` expects, from the release in its version banner ("Linux version
// 6.1.0-28-amd64 ..."): with the inverse-32 list before 6.15, without it from 6.15. Nothing when
// the file has no banner.
std::optional<RelocationFormat> relocs_format_of_kernel(std::span<const uint8_t> elf);

// Whether a symbol table of `elf` names `symbol`; nothing for a file without one (a stripped
// vmlinux, as every bzImage holds), or one whose section table or symbols cannot be read.
std::optional<bool> elf_defines_symbol(std::span<const uint8_t> elf, std::string_view symbol);

}  // namespace kpack
