#include "stub/options/kaslr_options.h"

#include "stub/options/command_line.h"

namespace kpack {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

bool starts_with(const char* text, uint64_t length, const char* prefix) {
  uint64_t i = 0;
  for (; prefix[i]; ++i)
    if (i >= length || text[i] != prefix[i]) return false;
  return true;
}

// memparse(): parse_number's number with an optional K/M/G/T/P/E suffix.
uint64_t parse_size(const char*& p, const char* end) {
  uint64_t value = 0;
  parse_number(p, end, &value);
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

void add_range(Range* ranges, uint32_t* count, Range r, bool* overflow) {
  if (*count == kMaxReservedRanges)
    *overflow = true;
  else
    ranges[(*count)++] = r;
}

// One memmap= value: comma-separated nn[KMG]{@#$!%}ss entries, or nn alone (a memory limit). For
// KASLR, as the stock decompressor's mem_avoid_memmap: the first four #, $ and ! regions are
// avoided, nn@ss and nn%ss keep nothing away. For the stub's own writes, as the kernel's
// parse_memmap_one: every region but nn@ss is not RAM, and after exactmap only nn@ss ones are.
void parse_memmap(const char* p, const char* end, KaslrOptions& o) {
  MemoryReservations& m = o.memory;
  while (p < end) {
    const char* item_end = p;
    while (item_end < end && *item_end != ',') ++item_end;
    if (starts_with(p, static_cast<uint64_t>(item_end - p), "exactmap")) {
      m.exactmap = true;
      p = item_end + 1;
      continue;
    }
    uint64_t size = parse_size(p, item_end);
    if (p == item_end) {
      if (size && size < o.memory_limit) o.memory_limit = size;
    } else if (*p == '#' || *p == '$' || *p == '!' || *p == '%' || *p == '@') {
      char kind = *p++;
      uint64_t start = parse_size(p, item_end);
      Range region = range_of(start, size);
      if (kind == '@') {
        add_range(m.exact_ram, &m.exact_ram_count, region, &m.overflow);
      } else {
        add_range(m.reserved, &m.reserved_count, region, &m.overflow);
        if (kind == '%') {
          // A type change: no KASLR region.
        } else if (o.kaslr_memmap_count == kMaxMemmapRegions) {
          o.too_many_memmaps = true;
        } else {
          ++o.kaslr_memmap_count;
        }
      }
    }
    p = item_end + 1;
  }
}

}  // namespace

KaslrOptions parse_kaslr_options(const char* text, uint64_t length) {
  KaslrOptions o;
  // cmdline_find_option_bool reads the whole line; handle_mem_options stops at "--".
  o.disabled = command_line_has(text, length, "nokaslr");
  bool gigantic_page_size = false;
  command_line::Bytes read{text};
  command_line::for_each_word(
      read, uint64_t{0}, kernel_options_end(text, length), [&](const command_line::Word<uint64_t>& word) {
        const char* value = text + word.value_begin;
        const char* value_end = text + word.value_end;
        auto is = [&](const char* key) { return command_line::has_key(read, word, key) && value != value_end; };
        if (is("mem")) {
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

}  // namespace kpack
