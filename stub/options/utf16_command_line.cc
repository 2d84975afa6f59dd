// Two passes, as in the Linux stub, because they disagree at the edges and the kernel's result is
// what must be reproduced: the first measures how many UTF-8 bytes to keep (the size limit, the
// newline, the cut at whitespace), the second converts at most that many.
#include "stub/options/utf16_command_line.h"

#include "stub/options/command_line.h"

namespace kpack {
namespace {

bool is_high_surrogate(char16_t c) { return (c & 0xFC00) == 0xD800; }
bool is_low_surrogate(char16_t c) { return (c & 0xFC00) == 0xDC00; }
bool is_surrogate(char16_t c) { return (c & 0xF800) == 0xD800; }
uint32_t utf8_length_in_bmp(char16_t c) { return 1 + (c >= 0x80) + (c >= 0x800); }

// The first pass: UTF-8 bytes up to NUL or newline; past `limit`, only up to the last unquoted
// whitespace (possibly none at all).
uint32_t bytes_to_keep(const char16_t* text, uint64_t units, uint32_t limit) {
  uint32_t bytes = 0, safe_bytes = 0;
  bool in_quote = false;
  uint64_t i = 0;
  while (bytes < limit && i < units) {
    char16_t c = text[i++];
    if (c < 0x80) {
      if (c == 0 || c == '\n') break;
      if (c == '"')
        in_quote = !in_quote;
      else if (!in_quote && command_line::is_kernel_space(c))
        safe_bytes = bytes;
      ++bytes;
      continue;
    }
    bytes += utf8_length_in_bmp(c);
    // A pair takes one byte more than U+FFFD would; a high surrogate in the last unit counts nothing.
    if (is_high_surrogate(c)) {
      if (i == units) {
        bytes -= 3;
      } else if (is_low_surrogate(text[i])) {
        ++bytes;
        ++i;
      }
    }
  }
  return bytes >= limit ? safe_bytes : bytes;
}

uint32_t put_utf8(uint32_t code_point, char* out) {
  if (code_point < 0x80) {
    out[0] = static_cast<char>(code_point);
    return 1;
  }
  static constexpr uint8_t kLeadingBits[] = {0, 0xC0, 0xE0, 0xF0};
  uint32_t trailing = 1 + (code_point >= 0x800) + (code_point >= 0x10000);
  for (uint32_t k = trailing; k > 0; --k, code_point >>= 6) out[k] = static_cast<char>(0x80 | (code_point & 0x3F));
  out[0] = static_cast<char>(kLeadingBits[trailing] | code_point);
  return trailing + 1;
}

}  // namespace

uint32_t utf16_command_line_to_utf8(const char16_t* text, uint64_t units, char* out, uint32_t limit) {
  uint32_t keep = text && limit ? bytes_to_keep(text, units, limit) : 0;
  // The second pass: whole characters within `keep` bytes, up to a NUL; a high surrogate that would
  // end exactly at `keep` is left out without looking at the unit after it.
  uint32_t n = 0;
  for (const char16_t* s = text; n < keep && *s;) {
    char16_t c = *s++;
    uint32_t length = utf8_length_in_bmp(c);
    if (n + length > keep) break;
    uint32_t code_point = c;
    if (is_surrogate(c)) {
      if (is_high_surrogate(c) && n + length == keep) break;
      code_point = 0xFFFD;
      if (is_high_surrogate(c) && is_low_surrogate(*s)) code_point = 0x10000 + ((c - 0xD800u) << 10) + (*s++ - 0xDC00u);
    }
    n += put_utf8(code_point, out + n);
  }
  if (limit) out[n] = 0;
  return n;
}

}  // namespace kpack
