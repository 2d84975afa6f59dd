// The compressed-stream formats found in payloads, by their magic bytes, and the LZ4 frame
// descriptor (lz4_Frame_format.md) that the stub parses itself. One definition for the packer's
// readers and the stub's decoder.
#pragma once

#include <stdint.h>

namespace kpack::frame {

inline constexpr uint8_t kGzipMagic[] = {0x1F, 0x8B};
inline constexpr uint8_t kXzMagic[] = {0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00};
inline constexpr uint8_t kLz4LegacyMagic[] = {0x02, 0x21, 0x4C, 0x18};
inline constexpr uint8_t kLz4FrameMagic[] = {0x04, 0x22, 0x4D, 0x18};
inline constexpr uint8_t kZstdMagic[] = {0x28, 0xB5, 0x2F, 0xFD};
inline constexpr uint8_t kBzip2Magic[] = {'B', 'Z', 'h'};
inline constexpr uint8_t kLzmaMagic[] = {0x5D, 0x00, 0x00};  // lc=3 lp=0 pb=2, then a small dictionary size
inline constexpr uint8_t kLzoMagic[] = {0x89, 0x4C, 0x5A, 0x4F};

// LZ4 frame descriptor: the FLG byte's bits, and the BD byte's block-size field.
inline constexpr uint8_t kLz4VersionMask = 0xC0, kLz4Version = 0x40;
inline constexpr uint8_t kLz4BlockIndependent = 0x20, kLz4BlockChecksum = 0x10, kLz4ContentSize = 0x08;
inline constexpr uint8_t kLz4ContentChecksum = 0x04, kLz4Reserved = 0x02, kLz4DictId = 0x01;
inline constexpr uint8_t kLz4BlockDescriptorReserved = 0x8F;
inline constexpr uint32_t kLz4Uncompressed = 0x80000000u;  // high bit of a block's size word
// LZ4 matches reach back at most this far: the history a linked block needs.
inline constexpr uint64_t kLz4HistorySize = 64 * 1024;

}  // namespace kpack::frame
