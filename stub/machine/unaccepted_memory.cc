#include "stub/machine/unaccepted_memory.h"

namespace kpack {
namespace {

constexpr uint64_t kBitsPerByte = 8;

// The descriptor's range, or an empty one when its page count runs past the address space.
Range range_of_descriptor(const efi::MemoryDescriptor& d) {
  if (d.number_of_pages > (~0ull - d.physical_start) / efi::kPageSize) return Range{};
  return range_of(d.physical_start, d.number_of_pages * efi::kPageSize);
}

// How many units the bitmap covers, without overflowing on an earlier stage's table.
uint64_t covered_units(const efi::LinuxUnacceptedMemory& table) {
  return table.size > (~0ull / kBitsPerByte) ? ~0ull : table.size * kBitsPerByte;
}

}  // namespace

UnacceptedBitmapExtent unaccepted_bitmap_extent(const EfiMemoryMapView& map) {
  uint64_t lowest = ~0ull, highest = 0;
  for (uint64_t i = 0, count = descriptor_count(map); i < count; ++i) {
    const efi::MemoryDescriptor& d = descriptor_at(map, i);
    if (d.type != efi::kUnacceptedMemory) continue;
    Range r = range_of_descriptor(d);
    if (r.empty()) continue;
    lowest = r.begin < lowest ? r.begin : lowest;
    highest = r.end > highest ? r.end : highest;
  }
  constexpr uint64_t unit = efi::kUnacceptedUnitSize;
  if (lowest >= highest || align_up(highest, unit) < highest) return UnacceptedBitmapExtent{};
  uint64_t base = align_down(lowest, unit), units = (align_up(highest, unit) - base) / unit;
  return UnacceptedBitmapExtent{base, (units + kBitsPerByte - 1) / kBitsPerByte};
}

void init_unaccepted_table(efi::LinuxUnacceptedMemory* table, UnacceptedBitmapExtent extent) {
  table->version = efi::kUnacceptedMemoryTableVersion;
  table->unit_size = efi::kUnacceptedUnitSize;
  table->phys_base = extent.phys_base;
  table->size = extent.bytes;
  __builtin_memset(table->bitmap, 0, extent.bytes);
}

Range mark_unaccepted(efi::LinuxUnacceptedMemory* table, Range unaccepted) {
  uint64_t unit = table->unit_size, base = table->phys_base;
  // The kernel finds a unit's bit at (address - phys_base) / unit_size: both must line up.
  if (unit < efi::kPageSize || !is_power_of_two(unit) || base % unit || unaccepted.empty()) return Range{};
  uint64_t first = align_up(unaccepted.begin, unit), last = align_down(unaccepted.end, unit);
  if (first < unaccepted.begin) return Range{};  // rounded past the top of the address space
  if (first < base) first = base;                // below the bitmap
  if (last <= first) return Range{};
  uint64_t first_bit = (first - base) / unit, end_bit = (last - base) / unit;
  uint64_t covered = covered_units(*table);
  if (end_bit > covered) end_bit = covered;  // above the bitmap
  if (end_bit <= first_bit) return Range{};
  for (uint64_t bit = first_bit; bit < end_bit; ++bit)
    table->bitmap[bit / kBitsPerByte] |= static_cast<uint8_t>(1u << (bit % kBitsPerByte));
  return Range{base + first_bit * unit, base + end_bit * unit};
}

}  // namespace kpack
