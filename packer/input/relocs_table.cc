#include "packer/input/relocs_table.h"

#include <charconv>

#include "formats/le.h"
#include "stub/unpack/relocation_table.h"

namespace kpack {

std::vector<uint8_t> encode_relocation_lists(const RelocationLists& table) {
  std::vector<uint8_t> out;
  size_t words =
      relocation_zero_words(table.format) + table.relocs64.size() + table.inverse32.size() + table.relocs32.size();
  out.reserve(words * kRelocationWordSize);
  auto word = [&out](uint32_t value) {
    out.resize(out.size() + kRelocationWordSize);
    store_le(out.data() + out.size() - kRelocationWordSize, value);
  };
  word(kRelocationListStart);
  for (uint32_t v : table.relocs64) word(v);
  if (table.format == RelocationFormat::kWithInverse32) {
    word(kRelocationListStart);
    for (uint32_t v : table.inverse32) word(v);
  }
  word(kRelocationListStart);
  for (uint32_t v : table.relocs32) word(v);
  return out;
}

// The stub's own parser decides the shape, so kpack accepts exactly the tables the stub applies.
Result<RelocationLists> split_relocation_lists(const FileView& file) {
  std::span<const uint8_t> bytes = file.bytes;
  if (bytes.empty()) return file.error("relocation table is empty");
  RelocationTable parsed;
  StubStatus status = parse_relocation_table(bytes.data(), bytes.size(), &parsed);
  if (!status.ok()) return file.error(status.message);
  RelocationLists table;
  table.format = parsed.format;
  auto copy = [&](uint64_t begin, uint64_t end, std::vector<uint32_t>& list) {
    for (uint64_t i = begin; i < end; ++i) list.push_back(load_le<uint32_t>(bytes.data() + kRelocationWordSize * i));
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
  return relocation_format_for_release(major, minor);
}

std::string describe_relocation_lists(const RelocationLists& table) {
  std::string text =
      std::string(relocation_format_name(table.format)) + ": 64-bit " + std::to_string(table.relocs64.size());
  if (table.format == RelocationFormat::kWithInverse32)
    text += ", inverse-32 " + std::to_string(table.inverse32.size());
  text += ", 32-bit " + std::to_string(table.relocs32.size());
  return text;
}

}  // namespace kpack
