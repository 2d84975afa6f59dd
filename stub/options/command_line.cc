#include "stub/options/command_line.h"

namespace kpack {

bool command_line_has(const char* text, uint64_t length, const char* word) {
  return command_line::has_flag(command_line::Bytes{text}, uint64_t{0}, length, word);
}

uint64_t kernel_options_end(const char* text, uint64_t length) {
  command_line::Bytes read{text};
  uint64_t end = length;
  command_line::for_each_word(read, uint64_t{0}, length, [&](const command_line::Word<uint64_t>& word) {
    if (!command_line::is_flag(read, word, "--")) return false;
    end = word.key_begin;
    if (end && text[end - 1] == '"') --end;  // a quoted "--" starts at its quote
    return true;
  });
  return end;
}

bool parse_number(const char*& p, const char* end, uint64_t* out) {
  auto digit_of = [](char c) -> uint32_t {
    uint32_t letter = static_cast<uint8_t>(c) | 0x20;
    if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0');
    return letter >= 'a' && letter <= 'f' ? letter - 'a' + 10 : 99;
  };
  // _parse_integer_fixup_radix: "0x" counts as the prefix only before a hex digit.
  uint32_t base = 10;
  if (end - p >= 3 && p[0] == '0' && (p[1] | 0x20) == 'x' && digit_of(p[2]) < 16)
    base = 16, p += 2;
  else if (p < end && *p == '0')
    base = 8;
  uint64_t value = 0;
  const char* first = p;
  for (; p < end; ++p) {
    uint32_t digit = digit_of(*p);
    if (digit >= base) break;
    value = value > (UINT64_MAX - digit) / base ? UINT64_MAX : value * base + digit;
  }
  *out = value;
  return p > first;
}

uint64_t command_line_number(const char* text, uint64_t length, const char* key, uint64_t fallback) {
  constexpr uint64_t kMaxDigits = 19;  // below 2^64 whatever they are
  command_line::Bytes read{text};
  uint64_t result = fallback;
  command_line::for_each_word(read, uint64_t{0}, length, [&](const command_line::Word<uint64_t>& word) {
    uint64_t digits = word.value_end - word.value_begin;
    if (!command_line::has_key(read, word, key) || digits == 0 || digits > kMaxDigits) return false;
    uint64_t value = 0;
    for (uint64_t at = word.value_begin; at < word.value_end; ++at) {
      uint8_t c = read(at);
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    result = value;
    return false;
  });
  return result;
}

}  // namespace kpack
