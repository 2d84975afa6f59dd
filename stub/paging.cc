// The stub's own page tables: an identity map of 0..4 GiB with 2 MiB pages. Called from the 64-bit
// entry before relocation, so it uses nothing but its argument.
#include <stdint.h>

namespace {

struct alignas(4096) PageTables {
  uint64_t pml4[512];
  uint64_t pdpt[512];
  uint64_t pd[4][512];
};

constexpr uint64_t kPresentWritable = 0x3;
constexpr uint64_t kLargePage = 0x80;

}  // namespace

extern "C" {

PageTables stub_page_tables;

uint64_t build_identity_map(PageTables* tables) {
  for (uint64_t& entry : tables->pml4) entry = 0;
  for (uint64_t& entry : tables->pdpt) entry = 0;
  tables->pml4[0] = reinterpret_cast<uint64_t>(tables->pdpt) | kPresentWritable;
  for (uint64_t gib = 0; gib < 4; ++gib) {
    tables->pdpt[gib] = reinterpret_cast<uint64_t>(tables->pd[gib]) | kPresentWritable;
    for (uint64_t i = 0; i < 512; ++i)
      tables->pd[gib][i] = ((gib * 512 + i) << 21) | kPresentWritable | kLargePage;
  }
  return reinterpret_cast<uint64_t>(tables->pml4);
}

}  // extern "C"
