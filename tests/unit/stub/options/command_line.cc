// The one command-line tokenizer (stub/options/command_line.h): words, keys, values and flags as the
// kernel splits them, through a char reader and through a 16-bit-offset reader like the setup's.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stub/options/command_line.h"

using namespace kpack;

namespace {

// Each word as "key" or "key=value", quotes left out as the tokenizer leaves them out.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  command_line::Bytes read{text.c_str()};
  command_line::for_each_word(read, uint64_t{0}, uint64_t{text.size()}, [&](const command_line::Word<uint64_t>& w) {
    std::string word = text.substr(w.key_begin, w.key_end - w.key_begin);
    if (w.has_value) word += "=" + text.substr(w.value_begin, w.value_end - w.value_begin);
    words.push_back(word);
    return false;
  });
  return words;
}

using Words = std::vector<std::string>;

// What the 16-bit setup finds: offsets in a 64 KiB segment, the text at a paragraph's offset.
struct Segment {
  uint8_t bytes[0x10000] = {};
  uint8_t operator()(uint16_t at) const { return bytes[at]; }
};

}  // namespace

TEST_CASE("words split at every byte from 1 to ' ', and nowhere else") {
  CHECK(words_of("console=ttyS0 quiet") == Words{"console=ttyS0", "quiet"});
  CHECK(words_of("a\tb\nc\rd\ve\ff") == Words{"a", "b", "c", "d", "e", "f"});
  CHECK(words_of("a\x01"
                 "b\x1f"
                 "c") == Words{"a", "b", "c"});
  CHECK(words_of("  leading   and trailing  ") == Words{"leading", "and", "trailing"});
  CHECK(words_of("caf\xc3\xa9 x\xa0y") == Words{"caf\xc3\xa9", "x\xa0y"});  // bytes past 0x7F are letters
}

TEST_CASE("the text ends at its length or its first NUL") {
  CHECK(words_of("").empty());
  CHECK(words_of(" \t\n").empty());
  CHECK(words_of(std::string("one two\0three", 13)) == Words{"one", "two"});
  CHECK(words_of("last") == Words{"last"});
  const char text[] = "quiet kpack.debug";
  std::vector<std::string> cut;
  command_line::for_each_word(command_line::Bytes{text}, uint64_t{0}, uint64_t{11}, [&](const auto& w) {
    cut.emplace_back(text + w.key_begin, w.key_end - w.key_begin);
    return false;
  });
  CHECK(cut == Words{"quiet", "kpack"});  // "kpack.debug" cut at the length
}

TEST_CASE("keys run to the first '='; empty values are values") {
  CHECK(words_of("root=UUID=1234 init= =x a==b") == Words{"root=UUID=1234", "init=", "=x", "a==b"});
  std::string text = "root=UUID=1234";
  command_line::Bytes read{text.c_str()};
  command_line::Word<uint64_t> w{};
  REQUIRE(command_line::find_last(read, uint64_t{0}, uint64_t{text.size()}, "root", &w));
  CHECK(w.key_begin == 0);
  CHECK(w.key_end == 4);
  CHECK(w.value_begin == 5);
  CHECK(w.value_end == 14);
  CHECK(w.end == 14);
}

TEST_CASE("double quotes keep separators inside one word and are left out of keys and values") {
  CHECK(words_of("dyndbg=\"file a.c +p\" quiet") == Words{"dyndbg=file a.c +p", "quiet"});
  CHECK(words_of("\"key=a b\" x") == Words{"key=a b", "x"});
  CHECK(words_of("\"flag\"") == Words{"flag"});
  CHECK(words_of("a=\"b\"c") == Words{"a=b\"c"});              // a quote not at the end stays
  CHECK(words_of("a=b\"c d\"") == Words{"a=b\"c d\""});        // quotes inside a value protect, stay
  CHECK(words_of("a=\"open ended") == Words{"a=open ended"});  // an unclosed quote runs to the end
  CHECK(words_of("a=\"") == Words{"a="});
  CHECK(words_of("\"") == Words{""});
  // A word quoted inside another's value is not a word.
  CHECK_FALSE(command_line_has("x=\"kpack.debug\"", 15, "kpack.debug"));
}

TEST_CASE("flags are whole words without '='; keys match whole keys") {
  const char text[] = "console=ttyS0 kpack.debug quiet nokpack.debug kpack.debugger kpack.debug=0";
  uint64_t n = sizeof(text) - 1;
  CHECK(command_line_has(text, n, "kpack.debug"));
  CHECK(command_line_has(text, n, "quiet"));
  CHECK_FALSE(command_line_has(text, n, "kpack"));
  CHECK_FALSE(command_line_has(text, n, "console"));  // a key, not a flag
  CHECK_FALSE(command_line_has("kpack.debug=1", 13, "kpack.debug"));
  CHECK(command_line_has("quiet\tkpack.debug\n", 18, "kpack.debug"));  // a tab before, a newline after
  CHECK(command_line_has("kpack.debug", 11, "kpack.debug"));           // the last word, no separator
  CHECK_FALSE(command_line_has("", 0, "kpack.debug"));

  command_line::Bytes read{"key=1 keyfoo=2 ke=3"};
  command_line::Word<uint64_t> w{};
  REQUIRE(command_line::find_last(read, uint64_t{0}, uint64_t{19}, "key", &w));
  CHECK(w.value_begin == 4);
  CHECK(w.value_end == 5);
  CHECK_FALSE(command_line::find_last(read, uint64_t{0}, uint64_t{19}, "k", &w));
  CHECK_FALSE(command_line::find_last(read, uint64_t{0}, uint64_t{19}, "keyfoo=2", &w));
}

TEST_CASE("find_last returns the last key=value, as the kernel keeps the last") {
  std::string text = "vga=normal quiet vga=791 vga";
  command_line::Bytes read{text.c_str()};
  command_line::Word<uint64_t> w{};
  REQUIRE(command_line::find_last(read, uint64_t{0}, uint64_t{text.size()}, "vga", &w));
  CHECK(text.substr(w.value_begin, w.value_end - w.value_begin) == "791");
}

TEST_CASE("command_line_number: the last plain decimal of up to 19 digits, quotes allowed") {
  auto number = [](const char* text) { return command_line_number(text, std::strlen(text), "kpack.cpus", 64); };
  CHECK(number("kpack.cpus=4") == 4);
  CHECK(number("kpack.cpus=4 kpack.cpus=x") == 4);
  CHECK(number("kpack.cpus=\"8\"") == 8);
  CHECK(number("kpack.cpus=9999999999999999999") == 9999999999999999999ull);
  CHECK(number("kpack.cpus=10000000000000000000") == 64);  // 20 digits
  CHECK(number("kpack.cpus=-1") == 64);
  CHECK(number("kpack.cpus=\t2") == 64);  // "kpack.cpus=" then a word "2"
  CHECK(number("") == 64);
}

TEST_CASE("the setup's reader: 16-bit offsets from the paragraph offset to the 4 KiB limit") {
  Segment segment;
  const char text[] = "BOOT_IMAGE=/vmlinuz edd=off vga=0x317 quiet";
  uint16_t begin = 0xF;
  std::memcpy(segment.bytes + begin, text, sizeof(text));
  uint16_t end = static_cast<uint16_t>(begin + 4096);
  CHECK(command_line::has_flag(segment, begin, end, "quiet"));
  CHECK_FALSE(command_line::has_flag(segment, begin, end, "edd"));
  command_line::Word<uint16_t> w{};
  REQUIRE(command_line::find_last(segment, begin, end, "vga", &w));
  CHECK(w.value_begin == begin + 32);
  CHECK(w.value_end == begin + 37);
  REQUIRE(command_line::find_last(segment, begin, end, "edd", &w));
  CHECK(w.value_begin == begin + 24);
  // Without a NUL the text stops at `end`: a word across it is cut there.
  std::memset(segment.bytes, 'x', sizeof(segment.bytes));
  std::memcpy(segment.bytes + 0x1000, " vga=1", 6);
  REQUIRE(command_line::find_last(segment, uint16_t{0}, uint16_t{0x1005}, "vga", &w));
  CHECK(w.value_begin == 0x1005);
  CHECK(w.value_end == 0x1005);
}

TEST_CASE("numbers read as simple_strtoull with base 0: hex, octal, decimal, saturating") {
  struct Case {
    const char* text;
    bool ok;
    uint64_t value;
    size_t consumed;
  };
  const Case cases[] = {
      {"123", true, 123, 3},
      {"0x1F", true, 31, 4},
      {"0X1f", true, 31, 4},
      {"017", true, 15, 3},
      {"08", true, 0, 1},  // octal: 8 is no digit
      {"0", true, 0, 1},
      {"0xZ", true, 0, 1},  // "0x" before a non-hex byte is octal 0, as _parse_integer_fixup_radix reads it
      {"12M", true, 12, 2},
      {"abc", false, 0, 0},
      {"", false, 0, 0},
      {"18446744073709551615", true, UINT64_MAX, 20},
      {"18446744073709551616", true, UINT64_MAX, 20},  // past UINT64_MAX: saturates
      {"0xffffffffffffffffff", true, UINT64_MAX, 20},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const char* p = c.text;
    uint64_t value = 0;
    CHECK(parse_number(p, c.text + std::strlen(c.text), &value) == c.ok);
    CHECK(value == c.value);
    CHECK(static_cast<size_t>(p - c.text) == c.consumed);
  }
}
