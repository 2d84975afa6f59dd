// The parts of ELF64 that a vmlinux and kpack's ELF output need: the file header, program headers,
// notes, and what packer/input/relocs_from_elf.cc reads of sections, symbols and relocations.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack::elf {

inline constexpr uint8_t kMagic[4] = {0x7F, 'E', 'L', 'F'};
// e_ident's bytes after the magic.
inline constexpr size_t kIdentClass = 4;
inline constexpr size_t kIdentData = 5;
inline constexpr size_t kIdentVersion = 6;
inline constexpr size_t kIdentOsAbi = 7;
inline constexpr uint8_t kClass64 = 2;
inline constexpr uint8_t kDataLittle = 1;
inline constexpr uint8_t kVersionCurrent = 1;
inline constexpr uint16_t kTypeExec = 2;
inline constexpr uint16_t kMachineX86_64 = 62;

inline constexpr uint32_t kPtLoad = 1;
inline constexpr uint32_t kPtNote = 4;

inline constexpr uint32_t kPfX = 1;
inline constexpr uint32_t kPfW = 2;
inline constexpr uint32_t kPfR = 4;

struct Ehdr {
  uint8_t ident[16];
  ul16 type;
  ul16 machine;
  ul32 version;
  ul64 entry;
  ul64 phoff;
  ul64 shoff;
  ul32 flags;
  ul16 ehsize;
  ul16 phentsize;
  ul16 phnum;
  ul16 shentsize;
  ul16 shnum;
  ul16 shstrndx;
};

struct Phdr {
  ul32 type;
  ul32 flags;
  ul64 offset;
  ul64 vaddr;
  ul64 paddr;
  ul64 filesz;
  ul64 memsz;
  ul64 align;
};

struct Shdr {
  ul32 name;
  ul32 type;
  ul64 flags;
  ul64 addr;
  ul64 offset;
  ul64 size;
  ul32 link;
  ul32 info;
  ul64 addralign;
  ul64 entsize;
};

static_assert(sizeof(Ehdr) == 64);
static_assert(offsetof(Ehdr, type) == 16);
static_assert(offsetof(Ehdr, machine) == 18);
static_assert(offsetof(Ehdr, version) == 20);
static_assert(offsetof(Ehdr, entry) == 24);
static_assert(offsetof(Ehdr, phoff) == 32);
static_assert(offsetof(Ehdr, shoff) == 40);
static_assert(offsetof(Ehdr, flags) == 48);
static_assert(offsetof(Ehdr, ehsize) == 52);
static_assert(offsetof(Ehdr, phentsize) == 54);
static_assert(offsetof(Ehdr, phnum) == 56);
static_assert(offsetof(Ehdr, shentsize) == 58);
static_assert(offsetof(Ehdr, shnum) == 60);
static_assert(offsetof(Ehdr, shstrndx) == 62);

static_assert(sizeof(Phdr) == 56);
static_assert(offsetof(Phdr, flags) == 4);
static_assert(offsetof(Phdr, offset) == 8);
static_assert(offsetof(Phdr, vaddr) == 16);
static_assert(offsetof(Phdr, paddr) == 24);
static_assert(offsetof(Phdr, filesz) == 32);
static_assert(offsetof(Phdr, memsz) == 40);
static_assert(offsetof(Phdr, align) == 48);

static_assert(sizeof(Shdr) == 64);
static_assert(offsetof(Shdr, type) == 4);
static_assert(offsetof(Shdr, flags) == 8);
static_assert(offsetof(Shdr, addr) == 16);
static_assert(offsetof(Shdr, offset) == 24);
static_assert(offsetof(Shdr, size) == 32);
static_assert(offsetof(Shdr, entsize) == 56);

// A note, as PT_NOTE segments hold them one after another: this header, then the name (namesz
// bytes with its NUL) and the descriptor (descsz bytes), each padded to kNoteAlign.
struct Nhdr {
  ul32 namesz;
  ul32 descsz;
  ul32 type;
};
static_assert(sizeof(Nhdr) == 12);
static_assert(offsetof(Nhdr, descsz) == 4);
static_assert(offsetof(Nhdr, type) == 8);
// ELF64 notes are 4-byte aligned on Linux and in both loaders that read them (QEMU aligns names and
// descriptors to the PT_NOTE's p_align, rust-vmm/linux-loader always to 4).
inline constexpr uint64_t kNoteAlign = 4;

// Xen's x86/HVM direct boot ABI (PVH): the 32-bit physical address a loader enters in protected
// mode with paging off and EBX = struct hvm_start_info. Linux emits it in
// arch/x86/platform/pvh/head.S with an 8-byte descriptor (_ASM_PTR), the size both QEMU (which
// reads a size_t there, hw/i386/x86-common.c read_pvh_start_addr) and rust-vmm (at least 4
// bytes, of which it reads 4) take.
inline constexpr char kXenNoteName[4] = {'X', 'e', 'n', '\0'};
inline constexpr uint32_t kXenElfnotePhys32Entry = 18;
struct XenPvhNote {
  Nhdr header;  // namesz 4, descsz 8, type kXenElfnotePhys32Entry
  char name[4];
  ul64 entry;  // below 4 GiB
};
static_assert(sizeof(XenPvhNote) == 24);
static_assert(offsetof(XenPvhNote, name) == 12);
static_assert(offsetof(XenPvhNote, entry) == 16);

// Sections, symbols and relocations: what packer/input/relocs_from_elf.cc reads from a vmlinux.
inline constexpr uint32_t kShtSymtab = 2;
inline constexpr uint32_t kShtStrtab = 3;
inline constexpr uint32_t kShtRela = 4;
inline constexpr uint32_t kShtNote = 7;
inline constexpr uint32_t kShtNobits = 8;
inline constexpr uint32_t kShtSymtabShndx = 18;
inline constexpr uint64_t kShfAlloc = 2;
inline constexpr uint64_t kShfExecInstr = 4;
inline constexpr uint16_t kShnUndef = 0;
inline constexpr uint16_t kShnAbs = 0xFFF1;
inline constexpr uint16_t kShnCommon = 0xFFF2;
inline constexpr uint16_t kShnXindex = 0xFFFF;

inline constexpr uint32_t kRX86_64None = 0;
inline constexpr uint32_t kRX86_64_64 = 1;
inline constexpr uint32_t kRX86_64Pc32 = 2;
inline constexpr uint32_t kRX86_64Plt32 = 4;
inline constexpr uint32_t kRX86_64Relative = 8;
inline constexpr uint32_t kRX86_64_32 = 10;
inline constexpr uint32_t kRX86_64_32S = 11;
inline constexpr uint32_t kRX86_64Pc64 = 24;
inline constexpr uint32_t kRX86_64RexGotpcrelx = 42;

struct Sym {
  ul32 name;
  uint8_t info;
  uint8_t other;
  ul16 shndx;
  ul64 value;
  ul64 size;
};

struct Rela {
  ul64 offset;
  ul64 info;  // symbol index << 32 | type
  ul64 addend;
};

static_assert(sizeof(Sym) == 24);
static_assert(sizeof(Rela) == 24);

}  // namespace kpack::elf
