// The kernel command line split into words, once for every reader of it: the stub's options
// (kpack.debug, kpack.cpus=), KASLR's (nokaslr, mem=, memmap=), the EFI entry's initrd= paths and
// the 16-bit setup's (vga=, edd=, quiet), which reads it byte by byte through FS in real mode. So
// the tokenizer is a header of templates over a byte reader `read(offset) -> uint8_t`, with no
// library call and nothing wider than the offset type, and compiles for -m16 -march=i386 too.
//
// The rules are the kernel's:
// - A word ends at a separator: any byte from 1 to ' ', the test of arch/x86/boot/cmdline.c, the
//   parser the kernel's own setup and its decompressor (nokaslr, earlyprintk=) share. lib/cmdline.c,
//   which the running kernel and the decompressor's mem=/memmap= pass use, splits at isspace():
//   the same for every blank a loader writes (space, \t, \n, \v, \f, \r); they differ only on other
//   control bytes and Latin-1's no-break space 0xA0.
// - The text ends at `end` or at the first NUL, whichever comes first.
// - Double quotes protect separators, as lib/cmdline.c's next_arg does: `dyndbg="file a.c +p"` is
//   one word, and the kernel would not see a word quoted inside another's value either. A value in
//   quotes (key="a b") is given without them; so is a word in quotes ("key=a b").
// - A word's key runs up to its first '='; "key" alone is a flag, "key=" a key with an empty value,
//   and "keyfoo=" neither of "key". Later words win where a key repeats (callers decide).
#pragma once

#include <stdint.h>

namespace kpack::command_line {

inline constexpr bool is_separator(uint8_t c) { return c <= ' '; }
// lib/cmdline.c's isspace() on ASCII, for the readers that must cut where the running kernel would
// (the EFI entry's UTF-16 conversion): tab to carriage return, and space.
inline constexpr bool is_kernel_space(uint32_t c) { return (c >= 9 && c <= 13) || c == ' '; }

template <typename Offset>
struct Word {
  Offset key_begin, key_end;      // up to the first '=', or the whole word when it has none
  Offset value_begin, value_end;  // after that '='; empty when there is none
  Offset end;                     // where the next word's search starts
  bool has_value;                 // there was a '=' (the value may still be empty)
};

// The word starting at `at` (not a separator), up to the first separator outside quotes.
template <typename Offset, typename Read>
Word<Offset> read_word(const Read& read, Offset at, Offset end) {
  Word<Offset> word{at, at, at, at, at, false};
  bool quoted = false, opened = false;
  uint8_t last = 0;
  for (; at < end; ++at) {
    uint8_t c = read(at);
    if (c == 0 || (is_separator(c) && !quoted)) break;
    if (c == '"') {
      quoted = !quoted;
      // An opening quote of the word or of its value is left out, and one closing quote with it.
      Offset& begin = word.has_value ? word.value_begin : word.key_begin;
      if (begin == at && !opened) ++begin, opened = true;
    }
    if (c == '=' && !word.has_value) word.key_end = at, word.value_begin = at + 1, word.has_value = true;
    last = c;
  }
  word.end = at;
  Offset last_begin = word.has_value ? word.value_begin : word.key_begin;
  if (opened && last == '"' && at > last_begin) --at;
  word.value_end = at;
  if (!word.has_value) word.key_end = word.value_begin = at;
  return word;
}

// Calls visit(word) for each word of [at, end) in order until one returns true; whether one did.
template <typename Offset, typename Read, typename Visit>
bool for_each_word(const Read& read, Offset at, Offset end, const Visit& visit) {
  for (;;) {
    uint8_t c = 0;
    while (at < end && (c = read(at)) != 0 && is_separator(c)) ++at;
    if (at == end || c == 0) return false;
    Word<Offset> word = read_word(read, at, end);
    at = word.end;
    if (visit(word)) return true;
  }
}

// Whether the bytes [begin, end) spell the NUL-terminated `name`.
template <typename Offset, typename Read>
bool spells(const Read& read, Offset begin, Offset end, const char* name) {
  for (; begin < end; ++begin, ++name)
    if (!*name || read(begin) != static_cast<uint8_t>(*name)) return false;
  return !*name;
}

template <typename Offset, typename Read>
bool is_flag(const Read& read, const Word<Offset>& word, const char* name) {
  return !word.has_value && spells(read, word.key_begin, word.key_end, name);
}

template <typename Offset, typename Read>
bool has_key(const Read& read, const Word<Offset>& word, const char* key) {
  return word.has_value && spells(read, word.key_begin, word.key_end, key);
}

// Whether the bare word `name` is there.
template <typename Offset, typename Read>
bool has_flag(const Read& read, Offset begin, Offset end, const char* name) {
  return for_each_word(read, begin, end, [&](const Word<Offset>& word) { return is_flag(read, word, name); });
}

// The last `key=value` word into `found`; false when there is none.
template <typename Offset, typename Read>
bool find_last(const Read& read, Offset begin, Offset end, const char* key, Word<Offset>* found) {
  bool any = false;
  for_each_word(read, begin, end, [&](const Word<Offset>& word) {
    if (has_key(read, word, key)) *found = word, any = true;
    return false;
  });
  return any;
}

// The reader for a command line already in addressable memory.
struct Bytes {
  const char* text;
  uint8_t operator()(uint64_t at) const { return static_cast<uint8_t>(text[at]); }
};

}  // namespace kpack::command_line

namespace kpack {

// The stub's own questions, on a command line of `length` bytes in memory.
// True when `word` is there as a flag (kpack.debug).
bool command_line_has(const char* command_line, uint64_t length, const char* word);
// Where the kernel's own options end: at a bare "--" word (parse_args hands what follows to init),
// else `length`.
uint64_t kernel_options_end(const char* command_line, uint64_t length);

// A number as the kernel's simple_strtoull reads it with base 0 (lib/cmdline.c's get_option and
// memparse): 0x and hex digits, 0 and octal ones, or decimal ones, up to the first byte that is
// none, which `p` is left at. A value past UINT64_MAX reads as UINT64_MAX (a limit that large
// limits nothing; the kernel's would wrap). False without a digit.
bool parse_number(const char*& p, const char* end, uint64_t* out);

// The decimal N of the last `key=N` word whose N is a plain decimal number of at most 19 digits
// (kpack.cpus=4); `fallback` when there is none.
uint64_t command_line_number(const char* command_line, uint64_t length, const char* key, uint64_t fallback);

}  // namespace kpack
