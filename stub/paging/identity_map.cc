// The stub's own page tables: an identity map of 0..4 GiB with 2 MiB pages, plus 1 GiB windows
// around whatever the loader put above 4 GiB (the image itself, boot_params, the command line) -
// a 64-bit loader may do that once the header says XLF_CAN_BE_LOADED_ABOVE_4G. Called from the
// 64-bit entry before relocation, so it uses nothing but its arguments and RIP-relative symbols.
#include "stub/paging/identity_map.h"

#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"

using kpack::MapWindows;
using kpack::PageTables;

namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kLowGiBs = kpack::kIdentityMappedGiBs;
using kpack::kMaxHighPdpts;
using kpack::kMaxWindows;
using kpack::kPageLarge;
using kpack::kPagePresentWritable;
constexpr uint64_t kAddressMask = 0x000FFFFFFFFFF000ull;

void fill_pd(uint64_t* pd, uint64_t base) {
  for (uint64_t i = 0; i < 512; ++i) pd[i] = (base + (i << 21)) | kPagePresentWritable | kPageLarge;
}

// Maps the 1 GiB window holding `address`; false when the pool is exhausted.
bool map_window(PageTables* t, MapWindows* w, uint64_t address) {
  uint64_t base = address & ~(kGiB - 1);
  if (base < kLowGiBs * kGiB) return true;
  for (uint32_t i = 0; i < w->count; ++i)
    if (w->base[i] == base) return true;
  if (w->count == kMaxWindows) return false;
  uint64_t pml4_index = (base >> 39) & 511, pdpt_index = (base >> 30) & 511;
  uint64_t* pdpt;
  if (pml4_index == 0) {
    pdpt = t->pdpt;
  } else if (t->pml4[pml4_index]) {
    pdpt = reinterpret_cast<uint64_t*>(t->pml4[pml4_index] & kAddressMask);
  } else {
    if (w->high_pdpts == kMaxHighPdpts) return false;
    pdpt = t->high_pdpt[w->high_pdpts++];
    for (uint64_t i = 0; i < 512; ++i) pdpt[i] = 0;
    t->pml4[pml4_index] = reinterpret_cast<uint64_t>(pdpt) | kPagePresentWritable;
  }
  uint64_t* pd = t->window_pd[w->count];
  fill_pd(pd, base);
  pdpt[pdpt_index] = reinterpret_cast<uint64_t>(pd) | kPagePresentWritable;
  w->base[w->count++] = base;
  return true;
}

// Every window [begin, begin + size) touches.
bool map_range(PageTables* t, MapWindows* w, uint64_t begin, uint64_t size) {
  if (size == 0 || begin + size < begin) return map_window(t, w, begin);
  for (uint64_t a = begin & ~(kGiB - 1); a < begin + size; a += kGiB)
    if (!map_window(t, w, a)) return false;
  return true;
}

MapWindows stub_map_windows;

}  // namespace

extern "C" {

// Its own section, which stub.ld puts first among the writable data: the one 4 KiB-aligned object.
__attribute__((section(".data.page_tables"))) PageTables stub_page_tables;

// Returns the value for CR3; halts when the windows above 4 GiB do not fit in the pool, as switching
// would unmap the stub. `params` is read through the loader's own mapping; `image_size` comes from
// the record take_packer_record has already checked.
uint64_t build_identity_map(PageTables* tables, uint64_t image_base, const kpack::boot::BootParams* params,
                            uint64_t image_size) {
  // After the 32-bit entry these tables are already live with this very map: every entry below
  // is written with the value it already has or one that was not present, never cleared, so the
  // low 4 GiB stay mapped at every step.
  for (uint64_t gib = 0; gib < kLowGiBs; ++gib) fill_pd(tables->pd[gib], gib * kGiB);
  for (uint64_t i = 0; i < 512; ++i)
    tables->pdpt[i] = i < kLowGiBs ? reinterpret_cast<uint64_t>(tables->pd[i]) | kPagePresentWritable : 0;
  for (uint64_t i = 0; i < 512; ++i)
    tables->pml4[i] = i == 0 ? reinterpret_cast<uint64_t>(tables->pdpt) | kPagePresentWritable : 0;
  for (uint64_t i = 0; i < 512; ++i)
    tables->pml5[i] = i == 0 ? reinterpret_cast<uint64_t>(tables->pml4) | kPagePresentWritable : 0;
  MapWindows* windows = &stub_map_windows;
  windows->count = windows->high_pdpts = 0;
  uint64_t cmdline = params->command_line_address();
  uint64_t cmdline_size = uint64_t{params->hdr.cmdline_size} + 1;
  if (!map_range(tables, windows, image_base, image_size) ||
      !map_range(tables, windows, reinterpret_cast<uint64_t>(params), sizeof(*params)) ||
      (cmdline && !map_range(tables, windows, cmdline, cmdline_size)))
    kpack::halt_with(kpack::fail("too many 1 GiB windows above 4 GiB for the stub's page tables", image_base,
                                 reinterpret_cast<uint64_t>(params)));
  // A CPU in 5-level mode reads CR3 as a PML5 (turning LA57 off needs paging off: boot_kernel's
  // job, once it knows what the kernel wants); the tables below it are the same.
  bool five_levels = kpack::read_cr4() & kpack::kCr4La57;
  return reinterpret_cast<uint64_t>(five_levels ? tables->pml5 : tables->pml4);
}

}  // extern "C"

namespace kpack {

bool map_identity(uint64_t addr, uint64_t size) {
  if (!map_range(&stub_page_tables, &stub_map_windows, addr, size)) return false;
  // New entries only ever replace non-present ones; reloading CR3 still drops any stale
  // paging-structure cache entry, for the price of one TLB flush.
  uint64_t cr3;
  asm volatile("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
  return true;
}

uint64_t identity_mappable_below(uint64_t size) {
  // A range touches at most size / 1 GiB + 2 windows and, straddling a 512 GiB boundary, 2 PDPTs.
  uint64_t windows = size / kGiB + 2;
  if (kMaxWindows - stub_map_windows.count < windows) return kLowGiBs * kGiB;
  if (kMaxHighPdpts - stub_map_windows.high_pdpts < 2) return 512 * kGiB;
  return ~0ull;
}

bool identity_mapped(uint64_t addr, uint64_t size) {
  if (addr + size < addr) return false;
  uint64_t last = (size ? addr + size - 1 : addr) & ~(kGiB - 1);
  for (uint64_t a = addr & ~(kGiB - 1);; a += kGiB) {
    bool mapped = a < kLowGiBs * kGiB;
    for (uint32_t i = 0; !mapped && i < stub_map_windows.count; ++i) mapped = stub_map_windows.base[i] == a;
    if (!mapped) return false;
    if (a == last) return true;
  }
}

}  // namespace kpack
