// Xen's direct boot ABI (PVH), as QEMU's -kernel (pc's PVH option ROM, microvm), Cloud Hypervisor
// and Firecracker use it: an ELF note names a 32-bit entry, which they enter with paging off and
// EBX pointing at hvm_start_info (xen/include/public/arch-x86/hvm/start_info.h; Linux's
// include/xen/interface/hvm/start_info.h).
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack::pvh {

// The ELF note: name "Xen", type XEN_ELFNOTE_PHYS32_ENTRY, descriptor the entry's physical address.
inline constexpr char kNoteName[] = "Xen";
inline constexpr uint32_t kNotePhys32Entry = 18;

inline constexpr uint32_t kStartInfoMagic = 0x336ec578;

struct StartInfo {
  ul32 magic;
  ul32 version;  // 1 adds the memory map
  ul32 flags;
  ul32 nr_modules;
  ul64 modlist_paddr;  // Module[nr_modules]; the first is the initrd
  ul64 cmdline_paddr;  // NUL-terminated
  ul64 rsdp_paddr;
  ul64 memmap_paddr;  // version 1: MemmapEntry[memmap_entries]
  ul32 memmap_entries;
  ul32 reserved;
};
static_assert(sizeof(StartInfo) == 56);
static_assert(offsetof(StartInfo, version) == 4);
static_assert(offsetof(StartInfo, flags) == 8);
static_assert(offsetof(StartInfo, nr_modules) == 12);
static_assert(offsetof(StartInfo, modlist_paddr) == 16);
static_assert(offsetof(StartInfo, cmdline_paddr) == 24);
static_assert(offsetof(StartInfo, rsdp_paddr) == 32);
static_assert(offsetof(StartInfo, memmap_paddr) == 40);
static_assert(offsetof(StartInfo, memmap_entries) == 48);

struct Module {
  ul64 paddr;
  ul64 size;
  ul64 cmdline_paddr;
  ul64 reserved;
};
static_assert(sizeof(Module) == 32);
static_assert(offsetof(Module, size) == 8);
static_assert(offsetof(Module, cmdline_paddr) == 16);

struct MemmapEntry {
  ul64 addr;
  ul64 size;
  ul32 type;  // e820's type numbers
  ul32 reserved;
};
static_assert(sizeof(MemmapEntry) == 24);
static_assert(offsetof(MemmapEntry, size) == 8);
static_assert(offsetof(MemmapEntry, type) == 16);

}  // namespace kpack::pvh
