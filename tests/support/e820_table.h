// The e820 table a test's boot_params ends up with, as comparable values.
#pragma once

#include <vector>

#include "formats/boot_params.h"

namespace kpack::test {

struct E820Row {
  uint64_t addr, size;
  uint32_t type;
  bool operator==(const E820Row&) const = default;
};

inline std::vector<E820Row> e820_rows(const boot::BootParams& params) {
  std::vector<E820Row> rows;
  for (uint32_t i = 0; i < params.e820_entries; ++i)
    rows.push_back({params.e820_table[i].addr, params.e820_table[i].size, params.e820_table[i].type});
  return rows;
}

}  // namespace kpack::test
