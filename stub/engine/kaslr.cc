#include "stub/engine/kaslr.h"

#include "formats/le.h"
#include "stub/engine/command_line.h"
#include "stub/engine/relocation_table.h"

namespace kpack {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kVirtualAlignment = 2ull << 20;

bool starts_with(const char* text, uint64_t length, const char* prefix) {
  uint64_t i = 0;
  for (; prefix[i]; ++i)
    if (i >= length || text[i] != prefix[i]) return false;
  return true;
}

// memparse(): a number (decimal, 0x hex or 0 octal) with an optional K/M/G/T/P/E suffix.
uint64_t parse_size(const char*& p, const char* end) {
  uint64_t base = 10, value = 0;
  if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  } else if (p < end && p[0] == '0') {
    base = 8;
  }
  for (; p < end; ++p) {
    uint64_t digit;
    if (*p >= '0' && *p <= '9')
      digit = static_cast<uint64_t>(*p - '0');
    else if (base == 16 && *p >= 'a' && *p <= 'f')
      digit = static_cast<uint64_t>(*p - 'a' + 10);
    else if (base == 16 && *p >= 'A' && *p <= 'F')
      digit = static_cast<uint64_t>(*p - 'A' + 10);
    else
      break;
    if (digit >= base) break;
    value = value * base + digit;
  }
  if (p < end) {
    uint32_t shift = 0;
    switch (*p) {
      case 'E':
      case 'e': shift += 10; [[fallthrough]];
      case 'P':
      case 'p': shift += 10; [[fallthrough]];
      case 'T':
      case 't': shift += 10; [[fallthrough]];
      case 'G':
      case 'g': shift += 10; [[fallthrough]];
      case 'M':
      case 'm': shift += 10; [[fallthrough]];
      case 'K':
      case 'k':
        shift += 10;
        ++p;
        break;
      default: break;
    }
    value <<= shift;
  }
  return value;
}

// One memmap= value: comma-separated nn[KMG]{@#$!%}ss entries, or nn alone (a memory limit).
void parse_memmap(const char* p, const char* end, KaslrOptions& o) {
  while (p < end) {
    const char* item_end = p;
    while (item_end < end && *item_end != ',') ++item_end;
    if (starts_with(p, static_cast<uint64_t>(item_end - p), "exactmap")) {
      p = item_end + 1;
      continue;
    }
    uint64_t size = parse_size(p, item_end);
    if (p == item_end) {
      if (size && size < o.memory_limit) o.memory_limit = size;
    } else if (*p == '#' || *p == '$' || *p == '!') {
      ++p;
      uint64_t start = parse_size(p, item_end);
      if (o.avoid_count == kMaxMemmapRegions)
        o.too_many_memmaps = true;
      else
        o.avoid[o.avoid_count++] = range_of(start, size);
    }
    // nn@ss (usable RAM) and nn%ss (a type change) keep nothing away from the kernel.
    p = item_end + 1;
  }
}

}  // namespace

KaslrOptions parse_kaslr_options(const char* text, uint64_t length) {
  KaslrOptions o;
  bool gigantic_page_size = false;
  command_line::Bytes read{text};
  command_line::for_each_word(read, uint64_t{0}, length, [&](const command_line::Word<uint64_t>& word) {
    const char* value = text + word.value_begin;
    const char* value_end = text + word.value_end;
    auto is = [&](const char* key) { return command_line::has_key(read, word, key) && value != value_end; };
    if (command_line::is_flag(read, word, "nokaslr")) {
      o.disabled = true;
    } else if (is("mem")) {
      uint64_t limit = parse_size(value, value_end);
      if (limit && limit < o.memory_limit) o.memory_limit = limit;
    } else if (is("memmap")) {
      parse_memmap(value, value_end, o);
    } else if (is("hugepagesz")) {
      gigantic_page_size = parse_size(value, value_end) == kGiB;
    } else if (is("hugepages")) {
      if (gigantic_page_size) o.gigantic_pages = parse_size(value, value_end);
    }
    return false;
  });
  return o;
}

uint64_t count_slots(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit) {
  uint64_t slots = 0;
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range r = free.at(i);
    if (r.end > limit) r.end = limit;
    uint64_t first = align_up(r.begin > floor ? r.begin : floor, alignment);
    if (first < r.begin || first >= r.end || r.end - first < size) continue;
    slots += (r.end - first - size) / alignment + 1;
  }
  return slots;
}

uint64_t slot_address(const FreeMemory& free, uint64_t size, uint64_t alignment, uint64_t floor, uint64_t limit,
                      uint64_t index) {
  for (uint32_t i = 0; i < free.count(); ++i) {
    Range r = free.at(i);
    if (r.end > limit) r.end = limit;
    uint64_t first = align_up(r.begin > floor ? r.begin : floor, alignment);
    if (first < r.begin || first >= r.end || r.end - first < size) continue;
    uint64_t here = (r.end - first - size) / alignment + 1;
    if (index < here) return first + index * alignment;
    index -= here;
  }
  return 0;
}

StubStatus apply_kaslr_options(const KaslrOptions& options, FreeMemory& free) {
  for (uint32_t i = 0; i < options.avoid_count; ++i) KPACK_TRY(free.remove(options.avoid[i]));
  KPACK_TRY(free.remove(Range{options.memory_limit, ~0ull}));
  // The kernel reserves its 1 GiB pages early, from the lowest aligned gigabytes of RAM.
  uint64_t pages = options.gigantic_pages;
  for (uint32_t i = 0; i < free.count() && pages;) {
    Range r = free.at(i);
    uint64_t first = align_up(r.begin, kGiB);
    if (first < r.begin || first >= r.end || r.end - first < kGiB) {
      ++i;
      continue;
    }
    uint64_t here = (r.end - first) / kGiB;
    if (here > pages) here = pages;
    pages -= here;
    KPACK_TRY(free.remove(Range{first, first + here * kGiB}));
    // The ranges shifted; start over from the same index, which now holds what lay below `first`.
    if (first > r.begin) ++i;
  }
  return StubStatus::success();
}

uint64_t random_virtual_offset(uint64_t link_address, uint64_t span, uint64_t random, uint64_t* slots) {
  *slots = 0;
  if (link_address > kKernelImageSize || span > kKernelImageSize - link_address) return 0;
  *slots = (kKernelImageSize - link_address - span) / kVirtualAlignment + 1;
  return random % *slots * kVirtualAlignment;
}

uint64_t mix_entropy(uint64_t state, uint64_t value) {
  // splitmix64's finalizer over the running state: every input bit reaches every output bit.
  uint64_t z = state ^ (value + 0x9e3779b97f4a7c15ull + (state << 6) + (state >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t mix_entropy(uint64_t state, const uint8_t* bytes, uint64_t size) {
  uint64_t i = 0;
  for (; i + 8 <= size; i += 8) state = mix_entropy(state, load_le<uint64_t>(bytes + i));
  uint64_t tail = 0;
  for (uint64_t k = 0; i + k < size; ++k) tail |= uint64_t{bytes[i + k]} << (8 * k);
  return mix_entropy(state, tail ^ (size << 56));
}

}  // namespace kpack
