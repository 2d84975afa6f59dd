// The kernel command line as the 16-bit setup sees it: a NUL-terminated string the loader put
// below 1 MiB, read through FS with the engine's word rules (stub/options/command_line.h).
#include "stub/options/command_line.h"
#include "stub/setup16/bios.h"
#include "stub/setup16/setup16.h"

namespace kpack::setup16 {
namespace {

constexpr uint32_t kMaxLength = 4096;

uint8_t read_command_line(uint16_t at) { return read_fs8(at); }

// FS set to the command line's paragraph and the span of offsets it may take; false when there is
// none the setup can reach.
bool open_command_line(uint16_t* begin, uint16_t* end) {
  uint32_t pointer = boot_params.hdr.cmd_line_ptr;
  if (!pointer || pointer >= 0x100000 - kMaxLength) return false;
  set_fs(static_cast<uint16_t>(pointer >> 4));
  *begin = pointer & 0xF;
  *end = static_cast<uint16_t>(*begin + kMaxLength);
  return true;
}

// The last word that is the flag `name` (`flag`) or has the key `name`, into `found`: one walk for
// both questions, the setup's bytes being few.
bool find_last(const char* name, bool flag, command_line::Word<uint16_t>* found) {
  uint16_t begin, end;
  if (!open_command_line(&begin, &end)) return false;
  bool any = false;
  command_line::for_each_word(read_command_line, begin, end, [&](const command_line::Word<uint16_t>& word) {
    if (word.has_value != flag && command_line::spells(read_command_line, word.key_begin, word.key_end, name))
      *found = word, any = true;
    return false;
  });
  return any;
}

}  // namespace

bool command_line_value(const char* name, char* value, size_t size) {
  command_line::Word<uint16_t> word;
  if (!find_last(name, false, &word)) return false;
  size_t n = 0;
  for (uint16_t at = word.value_begin; at < word.value_end && n + 1 < size; ++at)
    value[n++] = static_cast<char>(read_fs8(at));
  value[n] = 0;
  return true;
}

bool command_line_flag(const char* name) {
  command_line::Word<uint16_t> word;
  return find_last(name, true, &word);
}

}  // namespace kpack::setup16
