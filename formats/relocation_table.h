// The x86-64 kernel's relocation table: arch/x86/tools/relocs writes it from vmlinux as
// arch/x86/boot/compressed/vmlinux.relocs, a stock bzImage carries it in its payload right after
// the ELF, and so does a kpack image (PackerRecord::relocations_size bytes, formats/kpack_image.h).
// The packer writes or checks it, the stub applies it to move the kernel's virtual base.
//
// No header: little-endian u32 words, each the low 32 bits of a link-time virtual address to
// patch, in lists sorted ascending and each preceded by a 0 word (entries are never 0):
//
//   up to 6.14:  0, 64-bit list, 0, inverse-32 list, 0, 32-bit list       (3 zero words)
//   6.15 on:     0, 64-bit list, 0, 32-bit list                           (2 zero words)
//
// ("x86/boot/64: Remove inverse relocations" dropped the inverse list along with the zero-based
// per-CPU section it served.) So the number of zero words gives the format.
#pragma once

#include <stdint.h>

#include "formats/le.h"
#include "formats/sse2.h"

namespace kpack {

inline constexpr uint32_t kRelocationWordSize = 4;   // a little-endian u32
inline constexpr uint32_t kRelocationListStart = 0;  // the word before each list

enum class RelocationFormat : uint8_t { kWithInverse32, kWithoutInverse32 };

constexpr uint32_t relocation_zero_words(RelocationFormat format) {
  return format == RelocationFormat::kWithInverse32 ? 3 : 2;
}

// The first release whose relocs writes no inverse-32 list.
inline constexpr unsigned kRelocationWithoutInverse32Major = 6, kRelocationWithoutInverse32Minor = 15;

constexpr RelocationFormat relocation_format_for_release(unsigned major, unsigned minor) {
  bool inverse = major < kRelocationWithoutInverse32Major ||
                 (major == kRelocationWithoutInverse32Major && minor < kRelocationWithoutInverse32Minor);
  return inverse ? RelocationFormat::kWithInverse32 : RelocationFormat::kWithoutInverse32;
}
static_assert(relocation_format_for_release(6, 14) == RelocationFormat::kWithInverse32);
static_assert(relocation_format_for_release(6, 15) == RelocationFormat::kWithoutInverse32);

constexpr const char* relocation_format_name(RelocationFormat format) {
  return format == RelocationFormat::kWithInverse32 ? "with inverse-32 list (up to 6.14)"
                                                    : "without inverse-32 list (6.15+)";
}

// What each list's entries patch: the 64-bit list a u64 that gets the offset added (R_X86_64_64),
// the 32-bit list a u32 that gets it added (R_X86_64_32/32S), the inverse-32 list a per-CPU
// PC-relative s32 that gets it subtracted.
inline constexpr uint32_t kRelocation64Width = 8;
inline constexpr uint32_t kRelocation32Width = 4;
inline constexpr uint32_t kRelocationInverse32Width = 4;

// The kernel's virtual base is __START_KERNEL_map plus its physical link address.
inline constexpr uint64_t kStartKernelMap = 0xffffffff80000000ull;

// An entry is the low 32 bits of the place's link-time virtual address, which sign-extend back to
// it: only places in the top and bottom 2 GiB can be listed.
constexpr uint32_t relocation_entry(uint64_t virtual_address) { return static_cast<uint32_t>(virtual_address); }
constexpr uint64_t relocation_virtual_address(uint32_t entry) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(entry)));
}

// The link-time physical address an entry names: its virtual address taken back to physical
// through __START_KERNEL_map (per-CPU places included: relocs writes them at their load address).
constexpr uint64_t physical_target(uint32_t entry) { return relocation_virtual_address(entry) - kStartKernelMap; }

static_assert(relocation_entry(kStartKernelMap + 0x1000000) == 0x81000000u);
static_assert(relocation_virtual_address(0x81000000u) == kStartKernelMap + 0x1000000);
static_assert(physical_target(0x81000000u) == 0x1000000);
static_assert(relocation_virtual_address(0x7fffffffu) == 0x7fffffffu);  // bottom 2 GiB: positive

// A compressed payload carries the table coded (PackerRecord flag kRecordRelocationPlanes), the
// same bytes in a shape its codec compresses well: each word becomes its difference from the word
// before (mod 2^32, the first from 0), small in sorted lists, and the bytes are grouped by their
// place in the word, every word's lowest byte first, its highest last. 7.3.4's table (1,275,256
// bytes) goes from 988,507 bytes of zstd -3 to 135,250. A size that is not whole words keeps its
// last bytes as they are (such a table is refused when parsed).
inline void code_relocation_planes(const uint8_t* words, uint64_t size, uint8_t* planes) {
  const uint64_t count = size / kRelocationWordSize;
  uint32_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t word = load_le<uint32_t>(words + i * kRelocationWordSize);
    uint32_t difference = word - previous;
    previous = word;
    for (uint32_t b = 0; b < kRelocationWordSize; ++b)
      planes[b * count + i] = static_cast<uint8_t>(difference >> (8 * b));
  }
  for (uint64_t i = count * kRelocationWordSize; i < size; ++i) planes[i] = words[i];
}

// The table back from code_relocation_planes' bytes, into `words` (not the same memory). Every KASLR
// boot runs it over the whole table, so sixteen words at a time (SSE2, which every x86-64 CPU
// has): a byte from each plane interleaved into the words, then their running sum in four lanes.
inline void decode_relocation_planes(const uint8_t* planes, uint64_t size, uint8_t* words) {
  const uint64_t count = size / kRelocationWordSize;
  const uint8_t* plane[kRelocationWordSize] = {planes, planes + count, planes + 2 * count, planes + 3 * count};
  __m128i sum = _mm_setzero_si128();  // the last word decoded, in every lane
  uint64_t i = 0;
  for (; count - i >= 16; i += 16) {
    __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane[0] + i));
    __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane[1] + i));
    __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane[2] + i));
    __m128i b3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane[3] + i));
    __m128i low01 = _mm_unpacklo_epi8(b0, b1), high01 = _mm_unpackhi_epi8(b0, b1);
    __m128i low23 = _mm_unpacklo_epi8(b2, b3), high23 = _mm_unpackhi_epi8(b2, b3);
    __m128i quarter[4] = {_mm_unpacklo_epi16(low01, low23), _mm_unpackhi_epi16(low01, low23),
                          _mm_unpacklo_epi16(high01, high23), _mm_unpackhi_epi16(high01, high23)};
    for (int q = 0; q < 4; ++q) {
      __m128i x = quarter[q];
      x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
      x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
      x = _mm_add_epi32(x, sum);
      sum = _mm_shuffle_epi32(x, 0xFF);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(words + (i + 4 * q) * kRelocationWordSize), x);
    }
  }
  uint32_t word = static_cast<uint32_t>(_mm_cvtsi128_si32(sum));
  for (; i < count; ++i) {
    word += plane[0][i] | uint32_t{plane[1][i]} << 8 | uint32_t{plane[2][i]} << 16 | uint32_t{plane[3][i]} << 24;
    store_le<uint32_t>(words + i * kRelocationWordSize, word);
  }
  for (uint64_t j = count * kRelocationWordSize; j < size; ++j) words[j] = planes[j];
}

}  // namespace kpack
