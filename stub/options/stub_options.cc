#include "stub/options/stub_options.h"

#include "stub/options/command_line.h"

namespace kpack {
namespace {

// parse_args' int: an optional sign, then decimal digits; anything else and the option is ignored.
bool parse_decimal(const char* p, const char* end, int64_t* out) {
  bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p == end || end - p > 18) return false;
  int64_t value = 0;
  for (; p < end; ++p) {
    if (*p < '0' || *p > '9') return false;
    value = value * 10 + (*p - '0');
  }
  *out = negative ? -value : value;
  return true;
}

}  // namespace

StubOptions parse_stub_options(const char* text, uint64_t length) {
  StubOptions o;
  o.kaslr = parse_kaslr_options(text, length);
  o.no_five_level = command_line_has(text, length, "no5lvl");
  uint64_t options_end = kernel_options_end(text, length);
  command_line::Bytes read{text};
  command_line::for_each_word(read, uint64_t{0}, options_end, [&](const command_line::Word<uint64_t>& word) {
    auto flag = [&](const char* name) { return command_line::is_flag(read, word, name); };
    if (flag("kpack.debug")) o.debug = true;
    if (flag("kpack.test_broken_trampoline")) o.test_broken_trampoline = true;
    if (flag("kpack.test_stopped_helper")) o.test_stopped_helper = true;
    if (flag("kpack.test_decode_before_exit")) o.test_decode_before_exit = true;
    if (command_line::has_key(read, word, "panic"))
      parse_decimal(text + word.value_begin, text + word.value_end, &o.panic_seconds);
    return false;
  });
  o.cpus = command_line_number(text, options_end, "kpack.cpus", 0);
  return o;
}

}  // namespace kpack
