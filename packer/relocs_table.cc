#include "relocs_table.h"

#include <charconv>

#include "formats/le.h"

namespace kpack {

std::vector<uint8_t> encode_relocs(const RelocTable& table) {
  std::vector<uint8_t> out;
  size_t words = 2 + table.relocs64.size() + table.relocs32.size();
  if (table.format == RelocsFormat::kWithInverse32) words += 1 + table.inverse32.size();
  out.reserve(words * 4);
  auto word = [&out](uint32_t value) {
    out.resize(out.size() + 4);
    store_le(out.data() + out.size() - 4, value);
  };
  word(0);
  for (uint32_t v : table.relocs64) word(v);
  if (table.format == RelocsFormat::kWithInverse32) {
    word(0);
    for (uint32_t v : table.inverse32) word(v);
  }
  word(0);
  for (uint32_t v : table.relocs32) word(v);
  return out;
}

Result<RelocTable> parse_relocs(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) return error_in(name, "relocation table is empty");
  if (bytes.size() % 4)
    return error_in(name, "relocation table is " + std::to_string(bytes.size()) + " bytes, not a whole number of 32-bit words");
  size_t words = bytes.size() / 4;
  if (load_le<uint32_t>(bytes.data()) != 0) return error_in(name, "relocation table does not start with a 0 word");
  size_t zeros = 0;
  for (size_t i = 0; i < words; ++i) zeros += load_le<uint32_t>(bytes.data() + 4 * i) == 0;
  if (zeros != 2 && zeros != 3)
    return error_in(name, "relocation table has " + std::to_string(zeros) + " zero words, not 2 or 3");

  RelocTable table;
  table.format = zeros == 3 ? RelocsFormat::kWithInverse32 : RelocsFormat::kWithoutInverse32;
  std::vector<uint32_t>* lists[3] = {&table.relocs64, zeros == 3 ? &table.inverse32 : &table.relocs32,
                                     &table.relocs32};
  size_t list = 0;
  for (size_t i = 1; i < words; ++i) {
    uint32_t value = load_le<uint32_t>(bytes.data() + 4 * i);
    if (value == 0) ++list;
    else lists[list]->push_back(value);
  }
  return table;
}

std::optional<RelocsFormat> relocs_format_for_release(std::string_view release) {
  unsigned major = 0, minor = 0;
  const char* begin = release.data();
  const char* end = begin + release.size();
  auto parsed = std::from_chars(begin, end, major);
  if (parsed.ec != std::errc{} || parsed.ptr == end || *parsed.ptr != '.') return std::nullopt;
  parsed = std::from_chars(parsed.ptr + 1, end, minor);
  if (parsed.ec != std::errc{}) return std::nullopt;
  bool inverse = major < 6 || (major == 6 && minor < 15);
  return inverse ? RelocsFormat::kWithInverse32 : RelocsFormat::kWithoutInverse32;
}

const char* relocs_format_name(RelocsFormat format) {
  return format == RelocsFormat::kWithInverse32 ? "with inverse-32 list (up to 6.14)"
                                                : "without inverse-32 list (6.15+)";
}

std::string describe_relocs(const RelocTable& table) {
  std::string text = std::string(relocs_format_name(table.format)) + ": 64-bit " +
                     std::to_string(table.relocs64.size());
  if (table.format == RelocsFormat::kWithInverse32) text += ", inverse-32 " + std::to_string(table.inverse32.size());
  text += ", 32-bit " + std::to_string(table.relocs32.size());
  return text;
}

}  // namespace kpack
