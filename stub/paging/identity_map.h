// The stub's page tables (identity_map.cc): an identity map of 0..4 GiB plus 1 GiB windows above it, in
// 4 levels, or 5 when the CPU arrives with LA57 on (kexec from a 5-level kernel).
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"
#include "stub/runtime/asm_linkage.h"

namespace kpack {

constexpr uint64_t kIdentityMappedGiBs = 4;
// Page-table entry bits; with kPageLarge in a page directory, a 2 MiB page.
constexpr uint64_t kPagePresentWritable = 0x3;
constexpr uint64_t kPageLarge = 0x80;
// Windows for the image (it may straddle a boundary), boot_params, the command line, setup_data,
// and a kernel placed above 4 GiB (it may straddle too).
constexpr uint32_t kMaxWindows = 8;
constexpr uint32_t kMaxHighPdpts = 4;  // one per 512 GiB slot holding a window

// The first three members are also what the 32-bit entry builds (entry32.S, offsets generated
// from here): 0..4 GiB with 2 MiB pages. Pages only: every byte is in each image (stub.ld).
struct alignas(4096) PageTables {
  uint64_t pml4[512];
  uint64_t pdpt[512];
  uint64_t pd[kIdentityMappedGiBs][512];
  uint64_t high_pdpt[kMaxHighPdpts][512];
  uint64_t window_pd[kMaxWindows][512];
  uint64_t pml5[512];  // the root in 5-level mode: its first entry is pml4, the rest empty
};
static_assert(sizeof(PageTables) == (3 + kIdentityMappedGiBs + kMaxHighPdpts + kMaxWindows) * 4096);

// What the windows above 4 GiB hold, beside the tables.
struct MapWindows {
  uint64_t base[kMaxWindows];  // 1 GiB-aligned physical bases mapped above 4 GiB
  uint32_t count;
  uint32_t high_pdpts;
};

// True when [addr, addr + size) is inside the identity map the 64-bit entry switched to.
bool identity_mapped(uint64_t addr, uint64_t size);

// Adds the 1 GiB windows [addr, addr + size) touches to that map; false when the pool is spent.
bool map_identity(uint64_t addr, uint64_t size);

// An address below which map_identity can still map any `size` bytes: everywhere while the pool
// holds the windows and PDPTs such a range may take, else below 512 GiB (no PDPT left for a new
// 512 GiB slot) or 4 GiB (no windows left).
uint64_t identity_mappable_below(uint64_t size);

}  // namespace kpack

extern "C" {
// identity_map.cc: the tables entry64.S loads, in the image (stub.ld puts them first in its data).
extern kpack::PageTables stub_page_tables KPACK_ASM_SYMBOL;
// identity_map.cc, from entry64.S before relocation: the stub's identity map; returns CR3, or halts
// with an error line when the windows above 4 GiB do not fit.
uint64_t build_identity_map(kpack::PageTables* tables, uint64_t image_base, const kpack::boot::BootParams* params,
                            uint64_t image_size) KPACK_ASM_SYMBOL;
}
