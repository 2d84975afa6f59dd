#include "stub/machine/efi_memory_map.h"

#include "stub/machine/unaccepted_memory.h"

namespace kpack {
namespace {

// Collects entries in order, merging each with the one before when they touch and share a type.
class E820Writer {
 public:
  E820Writer(boot::BootParams* params, boot::E820Entry* extended, uint32_t extended_capacity)
      : params_(params), extended_(extended), extended_capacity_(extended_capacity) {}

  void add(uint64_t addr, uint64_t size, uint32_t type) {
    // The kernel would merge them anyway; merged, more of a large map fits the zero page.
    if (pending_ && pending_type_ == type && pending_end_ == addr) {
      pending_end_ += size;
      return;
    }
    flush();
    pending_ = true, pending_addr_ = addr, pending_end_ = addr + size, pending_type_ = type;
  }

  // Writes the last entry; returns how many went to `extended`.
  uint32_t finish() {
    flush();
    params_->e820_entries = static_cast<uint8_t>(count_);
    return extra_;
  }

 private:
  void flush() {
    if (!pending_) return;
    boot::E820Entry entry;
    entry.addr = pending_addr_;
    entry.size = pending_end_ - pending_addr_;
    entry.type = pending_type_;
    if (count_ < boot::kE820MaxEntries)
      params_->e820_table[count_++] = entry;
    else if (extra_ < extended_capacity_)
      extended_[extra_++] = entry;
    pending_ = false;
  }

  boot::BootParams* params_;
  boot::E820Entry* extended_;
  uint32_t extended_capacity_;
  uint32_t count_ = 0, extra_ = 0;
  bool pending_ = false;
  uint64_t pending_addr_ = 0, pending_end_ = 0;
  uint32_t pending_type_ = 0;
};

// An unaccepted range: RAM where the table marks whole units, reserved at the edges it cannot.
void add_unaccepted(E820Writer& writer, efi::LinuxUnacceptedMemory* table, Range unaccepted) {
  Range ram = mark_unaccepted(table, unaccepted);
  if (ram.empty()) {
    writer.add(unaccepted.begin, unaccepted.size(), boot::kE820Reserved);
    return;
  }
  if (unaccepted.begin < ram.begin) writer.add(unaccepted.begin, ram.begin - unaccepted.begin, boot::kE820Reserved);
  writer.add(ram.begin, ram.size(), boot::kE820Ram);
  if (ram.end < unaccepted.end) writer.add(ram.end, unaccepted.end - ram.end, boot::kE820Reserved);
}

}  // namespace

uint64_t descriptor_count(const EfiMemoryMapView& map) {
  return map.descriptor_size >= sizeof(efi::MemoryDescriptor) ? map.size / map.descriptor_size : 0;
}

bool has_mirrored_memory(const EfiMemoryMapView& map) {
  for (uint64_t i = 0, count = descriptor_count(map); i < count; ++i)
    if (descriptor_at(map, i).attribute & efi::kMemoryMoreReliable) return true;
  return false;
}

bool is_free_for_kernel(const efi::MemoryDescriptor& d, bool mirrored_only) {
  if (d.type != efi::kConventionalMemory || (d.attribute & efi::kMemorySpecificPurpose)) return false;
  return !mirrored_only || (d.attribute & efi::kMemoryMoreReliable);
}

uint32_t e820_type_of(const efi::MemoryDescriptor& d, E820View view) {
  // Soft-reserved conventional memory is kept for its driver: stock's efi_random_alloc skips it too.
  if (view == E820View::kFreeOnly) return is_free_for_kernel(d, false) ? boot::kE820Ram : boot::kE820Reserved;
  switch (d.type) {
    case efi::kLoaderCode:
    case efi::kLoaderData:
    case efi::kBootServicesCode:
    case efi::kBootServicesData:
    case efi::kConventionalMemory:
      return (d.attribute & efi::kMemorySpecificPurpose) ? boot::kE820SoftReserved : boot::kE820Ram;
    case efi::kUnusableMemory: return boot::kE820Unusable;
    case efi::kAcpiReclaimMemory: return boot::kE820Acpi;
    case efi::kAcpiMemoryNvs: return boot::kE820Nvs;
    case efi::kPersistentMemory: return boot::kE820Pmem;
    // Unaccepted memory too: only a kernel that accepts memory may have it, as RAM marked in its
    // table (efi_memory_map_to_e820).
    default: return boot::kE820Reserved;
  }
}

uint32_t efi_memory_map_to_e820(const EfiMemoryMapView& map, E820View view, boot::BootParams* params,
                                boot::E820Entry* extended, uint32_t extended_capacity,
                                efi::LinuxUnacceptedMemory* unaccepted) {
  E820Writer writer(params, extended, extended_capacity);
  for (uint64_t i = 0, count = descriptor_count(map); i < count; ++i) {
    const efi::MemoryDescriptor& d = descriptor_at(map, i);
    if (d.type == efi::kUnacceptedMemory && unaccepted && view == E820View::kHandover) {
      add_unaccepted(writer, unaccepted, range_of(d.physical_start, d.number_of_pages * efi::kPageSize));
      continue;
    }
    uint32_t type = e820_type_of(d, view);
    if (view == E820View::kFreeOnly && type != boot::kE820Ram) continue;  // only free RAM matters there
    writer.add(d.physical_start, d.number_of_pages * efi::kPageSize, type);
  }
  return writer.finish();
}

}  // namespace kpack
