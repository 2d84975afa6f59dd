#include <doctest/doctest.h>

#include <string>

#include "stub/options/utf16_command_line.h"

using namespace kpack;

namespace {

constexpr uint32_t kCommandLineSize = 2048;  // x86's COMMAND_LINE_SIZE

// The converted command line, with `units` of `text` given as LoadOptions; checks the NUL too.
std::string convert(std::u16string_view text, uint32_t limit = kCommandLineSize) {
  std::string out(limit + 1, '\x55');
  uint32_t n = utf16_command_line_to_utf8(text.data(), text.size(), out.data(), limit);
  REQUIRE(n < limit);
  CHECK(out[n] == '\0');
  return out.substr(0, n);
}

}  // namespace

TEST_CASE("ASCII passes through unchanged") {
  CHECK(convert(u"console=ttyS0 panic=-1 quiet initrd=initrd") == "console=ttyS0 panic=-1 quiet initrd=initrd");
}

TEST_CASE("each UTF-16 unit becomes one UTF-8 character: OVMF's widened bytes of 'été' stay two characters each") {
  // OVMF puts each byte of QEMU's -append into one unit: C3 A9 becomes U+00C3 U+00A9.
  CHECK(convert(u"kpack.probe=\u00C3\u00A9t\u00C3\u00A9") == "kpack.probe=\xC3\x83\xC2\xA9t\xC3\x83\xC2\xA9");
  CHECK(convert(u"x=\u00E9\u20AC") == "x=\xC3\xA9\xE2\x82\xAC");
}

TEST_CASE("surrogates: a pair is one 4-byte character, an unpaired one U+FFFD, a high one at the end is dropped") {
  CHECK(convert(u"a\xD83D\xDE00z") == "a\xF0\x9F\x98\x80z");
  CHECK(convert(u"a\xDC00z") == "a\xEF\xBF\xBDz");
  CHECK(convert(u"a\xD83Dz") == "a\xEF\xBF\xBDz");
  CHECK(convert(u"ab\xD83D") == "ab");
  CHECK(convert(std::u16string_view(u"ab\xD83D\0cd", 6)) == "ab");
  CHECK(convert(u"ab\xD83D\ncd") == "ab");
}

TEST_CASE("the text ends at NUL, at a newline, or where LoadOptions end") {
  CHECK(convert(std::u16string_view(u"quiet\0junk", 10)) == "quiet");
  CHECK(convert(u"quiet ro\nsecond line") == "quiet ro");
  char16_t unterminated[] = u"abcdef";
  std::string out(8, '\x55');
  CHECK(utf16_command_line_to_utf8(unterminated, 3, out.data(), 8) == 3);
  CHECK(out.substr(0, 4) == std::string("abc\0", 4));
}

TEST_CASE("too long for COMMAND_LINE_SIZE: cut at the last whitespace outside quotes that fits") {
  CHECK(convert(u"abc", 4) == "abc");
  CHECK(convert(u"abcd", 4) == "");
  CHECK(convert(u"aaaa bbbb cccc dddd", 16) == "aaaa bbbb cccc");
  CHECK(convert(u"aaaa\tbbbb", 8) == "aaaa");
  CHECK(convert(u"\"a b\" cc ddddddddddd", 10) == "\"a b\" cc");
  CHECK(convert(u"\"a b c d e f g", 8) == "");
  // A character's bytes count: 'é' takes two, so "ab é" is 5 bytes.
  CHECK(convert(u"ab \u00E9", 5) == "ab");
  CHECK(convert(u"ab \u00E9", 6) == "ab \xC3\xA9");
  std::u16string long_line(3000, u'x');
  long_line[100] = u' ';
  CHECK(convert(long_line) == std::string(100, 'x'));
}

TEST_CASE("no LoadOptions: an empty command line") {
  char out[4] = {1, 1, 1, 1};
  CHECK(utf16_command_line_to_utf8(nullptr, 0, out, 4) == 0);
  CHECK(out[0] == 0);
}
