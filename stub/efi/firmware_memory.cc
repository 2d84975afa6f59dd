#include "stub/efi/efi_boot.h"
#include "stub/machine/efi_memory_map.h"

namespace kpack::efi {
namespace {

Range page_range(uint64_t addr, uint64_t size) {
  return Range{addr & ~(kPageSize - 1), (addr + size + kPageSize - 1) & ~(kPageSize - 1)};
}

}  // namespace

const uint8_t* FirmwareMemory::readable(uint64_t addr, uint64_t size) {
  if (addr + size < addr) return nullptr;
  return reinterpret_cast<const uint8_t*>(addr);
}

uint8_t* FirmwareMemory::writable(uint64_t addr, uint64_t size) {
  if (addr + size < addr || !claim(range_of(addr, size))) return nullptr;
  return reinterpret_cast<uint8_t*>(addr);
}

// Allocates the pages of `r` not claimed yet, one run at a time.
bool FirmwareMemory::claim(Range r) {
  if (r.empty()) return true;
  Range wanted = page_range(r.begin, r.size());
  uint64_t at = wanted.begin;
  while (at < wanted.end) {
    // Skip what an earlier claim holds; otherwise claim up to the next claimed page.
    uint64_t next = wanted.end;
    bool held = false;
    for (uint32_t i = 0; i < claim_count_; ++i) {
      if (claims_[i].begin <= at && at < claims_[i].end) {
        held = true;
        at = claims_[i].end;
        break;
      }
      if (claims_[i].begin > at && claims_[i].begin < next) next = claims_[i].begin;
    }
    if (held) continue;
    if (claim_count_ == kMaxClaims) return false;
    uint64_t address = at;
    EfiStatus status = fw_.boot->allocate_pages(kAllocateAddress, kLoaderCode, (next - at) / kPageSize, &address);
    asm volatile("cli" ::: "memory");  // the firmware left them on; the engine runs without (efi_entry.cc)
    if (failed(status)) return false;
    claims_[claim_count_++] = Range{at, next};
    at = next;
  }
  return true;
}

void FirmwareMemory::release() {
  for (uint32_t i = 0; i < claim_count_; ++i) fw_.boot->free_pages(claims_[i].begin, claims_[i].size() / kPageSize);
  claim_count_ = 0;
}

EfiStatus read_memory_map(const Firmware& fw, uint64_t slack, MemoryMap* map) {
  uint64_t size = 0, key, descriptor_size;
  uint32_t version;
  EfiStatus status = fw.boot->get_memory_map(&size, nullptr, &key, &descriptor_size, &version);
  if (status != kBufferTooSmall) return failed(status) ? status : kLoadError;
  // The allocation itself may split a free range: room for that and for `slack` more.
  map->capacity = size + (slack + 4) * descriptor_size;
  void* buffer = nullptr;
  status = fw.boot->allocate_pool(kLoaderData, map->capacity, &buffer);
  if (failed(status)) return status;
  map->view.descriptors = static_cast<uint8_t*>(buffer);
  return reread_memory_map(fw, map);
}

EfiStatus reread_memory_map(const Firmware& fw, MemoryMap* map) {
  map->view.size = map->capacity;
  return fw.boot->get_memory_map(&map->view.size, reinterpret_cast<MemoryDescriptor*>(map->buffer()), &map->key,
                                 &map->view.descriptor_size, &map->descriptor_version);
}

uint32_t memory_map_to_e820(const MemoryMap& map, bool conventional_only, boot::BootParams* params,
                            boot::E820Entry* extended, uint32_t extended_capacity) {
  return efi_memory_map_to_e820(map.view, conventional_only ? E820View::kFreeOnly : E820View::kHandover, params,
                                extended, extended_capacity);
}

}  // namespace kpack::efi
