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

// get_option's number (lib/cmdline.c): an optional '-', then parse_number's; false without a digit.
// A value past INT64_MAX reads as INT64_MAX.
bool parse_kernel_integer(const char* p, const char* end, int64_t* out) {
  bool negative = p < end && *p == '-';
  if (negative) ++p;
  uint64_t magnitude = 0;
  if (!parse_number(p, end, &magnitude)) return false;
  int64_t value = magnitude > INT64_MAX ? INT64_MAX : static_cast<int64_t>(magnitude);
  *out = negative ? -value : value;
  return true;
}

// The kernel's CPU limit from nosmp, maxcpus= (setup_max_cpus; 0 is nosmp) and nr_cpus= (only a
// positive value counts): the smallest of those given, 0 for none.
uint64_t kernel_cpu_limit(bool nosmp, int64_t max_cpus, int64_t nr_cpus) {
  uint64_t limit = nosmp ? 1 : 0;
  auto apply = [&](uint64_t n) { limit = limit && limit < n ? limit : n; };
  if (max_cpus >= 0) apply(max_cpus == 0 ? 1 : static_cast<uint64_t>(max_cpus));
  if (nr_cpus > 0) apply(static_cast<uint64_t>(nr_cpus));
  return limit;
}

}  // namespace

StubOptions parse_stub_options(const char* text, uint64_t length) {
  StubOptions o;
  o.kaslr = parse_kaslr_options(text, length);
  o.no_five_level = command_line_has(text, length, "no5lvl");
  uint64_t options_end = kernel_options_end(text, length);
  command_line::Bytes read{text};
  bool nosmp = false;
  int64_t max_cpus = -1, nr_cpus = -1, disabled_apic_id = -1;
  command_line::for_each_word(read, uint64_t{0}, options_end, [&](const command_line::Word<uint64_t>& word) {
    auto flag = [&](const char* name) { return command_line::is_flag(read, word, name); };
    if (flag("kpack.debug")) o.debug = true;
    if (flag("kpack.test_broken_trampoline")) o.test_broken_trampoline = true;
    if (flag("kpack.test_stopped_helper")) o.test_stopped_helper = true;
    if (flag("kpack.test_decode_before_exit")) o.test_decode_before_exit = true;
    auto number = [&](const char* key, int64_t* out) {
      if (command_line::has_key(read, word, key))
        parse_kernel_integer(text + word.value_begin, text + word.value_end, out);
    };
    if (command_line::has_key(read, word, "panic"))
      parse_decimal(text + word.value_begin, text + word.value_end, &o.panic_seconds);
    // An early parameter's key matches with or without a value ("nosmp=1" is nosmp too).
    nosmp |= flag("nosmp") || command_line::has_key(read, word, "nosmp");
    number("maxcpus", &max_cpus);
    number("nr_cpus", &nr_cpus);
    number("disable_cpu_apicid", &disabled_apic_id);
    return false;
  });
  o.kernel_cpus = kernel_cpu_limit(nosmp, max_cpus, nr_cpus);
  // setup_max_cpus and disabled_cpu_apicid are unsigned: -1 is no CPU.
  o.disabled_apic_id = disabled_apic_id >= 0 && disabled_apic_id <= UINT32_MAX ? disabled_apic_id : -1;
  o.cpus = command_line_number(text, options_end, "kpack.cpus", 0);
  return o;
}

}  // namespace kpack
