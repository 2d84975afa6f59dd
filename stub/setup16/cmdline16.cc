// The kernel command line as the 16-bit setup sees it: a NUL-terminated string the loader put
// below 1 MiB, words separated by spaces, read through FS. Same word rules as the kernel's setup
// (no quoting): "name=value" gives a value, a bare "name" is a flag.
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

constexpr uint32_t kMaxLength = 4096;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Calls found(offset just past the name) for every word that begins with `name`, relative to FS,
// which stays set for the callback; true if it accepted any. Later words win, as in the kernel.
template <typename Found>
bool scan(const char* name, Found found) {
  bool any = false;
  uint32_t pointer = boot_params.hdr.cmd_line_ptr;
  if (!pointer || pointer >= 0x100000 - kMaxLength) return false;
  set_fs(static_cast<uint16_t>(pointer >> 4));
  uint16_t at = pointer & 0xF, end = at + kMaxLength;
  while (at < end) {
    while (at < end && is_space(static_cast<char>(read_fs8(at)))) ++at;
    char c = static_cast<char>(read_fs8(at));
    if (!c) break;
    const char* n = name;
    uint16_t p = at;
    while (*n && static_cast<char>(read_fs8(p)) == *n) ++n, ++p;
    if (!*n && found(p)) any = true;
    while (at < end && read_fs8(at) && !is_space(static_cast<char>(read_fs8(at)))) ++at;
  }
  return any;
}

}  // namespace

bool command_line_value(const char* name, char* value, size_t size) {
  return scan(name, [&](uint16_t p) {
    if (read_fs8(p) != '=') return false;
    size_t n = 0;
    for (++p; n + 1 < size; ++p) {
      char c = static_cast<char>(read_fs8(p));
      if (!c || is_space(c)) break;
      value[n++] = c;
    }
    value[n] = 0;
    return true;
  });
}

bool command_line_flag(const char* name) {
  return scan(name, [](uint16_t p) {
    char c = static_cast<char>(read_fs8(p));
    return !c || is_space(c);
  });
}

}  // namespace kpack::setup16
