// The parts of ELF64 that a vmlinux needs: the file header and program headers.
#pragma once

#include <stddef.h>

#include "le.h"

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

}  // namespace kpack::elf
