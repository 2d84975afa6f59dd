// The parts of ELF64 that a vmlinux needs: the file header and program headers.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack::elf {

inline constexpr uint8_t kMagic[4] = {0x7F, 'E', 'L', 'F'};
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
static_assert(offsetof(Shdr, offset) == 24);
static_assert(offsetof(Shdr, size) == 32);
static_assert(offsetof(Shdr, entsize) == 56);

// Sections, symbols and relocations: what packer/relocs_from_elf.cc reads from a vmlinux.
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
