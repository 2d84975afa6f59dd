// Byte helpers for tests, seeds and harnesses that build or inspect files field by field: the
// packer's own (packer/base/byte_io.h), whose integers are formats/le.h's, the code the stub uses too.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "formats/le.h"
#include "packer/base/byte_io.h"

namespace kpack::test {

using kpack::get;
using kpack::put;

inline uint32_t le32_at(std::span<const uint8_t> bytes, uint64_t offset) { return get<uint32_t>(bytes, offset); }

inline void append_le32(std::vector<uint8_t>& out, uint32_t value) { put(out, out.size(), value); }

}  // namespace kpack::test
