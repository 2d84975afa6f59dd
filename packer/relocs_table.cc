#include "packer/relocs_table.h"

#include <charconv>

#include "formats/le.h"

namespace kpack {

std::vector<uint8_t> encode_relocation_lists(const RelocationLists& table) {
  std::vector<uint8_t> out;
  size_t words = 2 + table.relocs64.size() + table.relocs32.size();
  if (table.format == RelocationFormat::kWithInverse32) words += 1 + table.inverse32.size();
  out.reserve(words * 4);
  auto word = [&out](uint32_t value) {
    out.resize(out.size() + 4);
    store_le(out.data() + out.size() - 4, value);
  };
  word(0);
  for (uint32_t v : table.relocs64) word(v);
  if (table.format == RelocationFormat::kWithInverse32) {
    word(0);
    for (uint32_t v : table.inverse32) word(v);
  }
  word(0);
  for (uint32_t v : table.relocs32) word(v);
  return out;
}

// The stub's own parser decides the shape, so kpack accepts exactly the tables the stub applies.
Result<RelocationLists> split_relocation_lists(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) return error_in(name, "relocation table is empty");
  RelocationTable parsed;
  StubStatus status = parse_relocation_table(bytes.data(), bytes.size(), &parsed);
  if (!status.ok()) return error_in(name, status.message);
  RelocationLists table;
  table.format = parsed.format;
  auto copy = [&](uint64_t begin, uint64_t end, std::vector<uint32_t>& list) {
    for (uint64_t i = begin; i < end; ++i) list.push_back(load_le<uint32_t>(bytes.data() + 4 * i));
  };
  copy(parsed.list64_begin, parsed.list64_end, table.relocs64);
  copy(parsed.inverse32_begin, parsed.inverse32_end, table.inverse32);
  copy(parsed.list32_begin, parsed.list32_end, table.relocs32);
  return table;
}

std::optional<RelocationFormat> relocs_format_for_release(std::string_view release) {
  unsigned major = 0, minor = 0;
  const char* begin = release.data();
  const char* end = begin + release.size();
  auto parsed = std::from_chars(begin, end, major);
  if (parsed.ec != std::errc{} || parsed.ptr == end || *parsed.ptr != '.') return std::nullopt;
  parsed = std::from_chars(parsed.ptr + 1, end, minor);
  if (parsed.ec != std::errc{}) return std::nullopt;
  bool inverse = major < 6 || (major == 6 && minor < 15);
  return inverse ? RelocationFormat::kWithInverse32 : RelocationFormat::kWithoutInverse32;
}

const char* relocs_format_name(RelocationFormat format) {
  return format == RelocationFormat::kWithInverse32 ? "with inverse-32 list (up to 6.14)"
                                                    : "without inverse-32 list (6.15+)";
}

std::string describe_relocation_lists(const RelocationLists& table) {
  std::string text =
      std::string(relocs_format_name(table.format)) + ": 64-bit " + std::to_string(table.relocs64.size());
  if (table.format == RelocationFormat::kWithInverse32)
    text += ", inverse-32 " + std::to_string(table.inverse32.size());
  text += ", 32-bit " + std::to_string(table.relocs32.size());
  return text;
}

}  // namespace kpack
