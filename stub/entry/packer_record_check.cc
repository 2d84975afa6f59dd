#include "stub/entry/packer_record_check.h"

#include "stub/base/range.h"
#include "stub/unpack/kernel_headers.h"

namespace kpack {
namespace {

constexpr uint64_t kMaxImageSize = 0xFFFFFFFFull;      // the setup header's sizes are 32-bit
constexpr uint64_t kMaxKernelAlignment = 1ull << 30;   // the stub maps and places in 2 MiB..1 GiB steps
constexpr uint64_t kMaxRelocationTable = 16ull << 20;  // Debian's kernels carry ~0.2-0.5 MiB

}  // namespace

// Runs in the stub before it relocates itself: no pointers in static data, nothing but arithmetic.
StubStatus check_packer_record(const PackerRecord& info, uint64_t record_offset) {
  if (__builtin_memcmp(info.magic, kPackerRecordMagic, sizeof(info.magic)) != 0)
    return fail("the kpack record after the stub has no magic", record_offset);
  if (info.version != kPackerRecordVersion) return fail("unknown kpack record version", info.version);
  if (info.codec >= kCodecCount) return fail("unknown payload codec in the kpack record", info.codec);
  uint64_t image_size = info.image_size, payload_offset = info.payload_offset, payload_size = info.payload_size;
  uint64_t stub_end = record_offset + sizeof(PackerRecord);
  if (record_offset % kPackerRecordAlign) return fail("the kpack record is misaligned", record_offset);
  if (image_size > kMaxImageSize || image_size < stub_end)
    return fail("the kpack record's image size does not cover the stub", image_size, stub_end);
  if (payload_offset < stub_end) return fail("the kpack record's payload overlaps the stub", payload_offset, stub_end);
  if (payload_size == 0 || payload_size > image_size - payload_offset || payload_offset > image_size)
    return fail("the kpack record's payload lies outside the image", payload_offset, payload_size);
  uint64_t alignment = info.kernel_alignment;
  if (!is_power_of_two(alignment) || alignment < kMinKernelAlignment || alignment > kMaxKernelAlignment)
    return fail("the kpack record's kernel alignment is not a power of two from 2 MiB to 1 GiB", alignment);
  if (info.min_kernel_address >= kHighestSegmentEnd)
    return fail("the kpack record's lowest kernel address is above 4 GiB", info.min_kernel_address);
  uint64_t relocations = info.relocations_size;
  bool raw = info.codec == static_cast<uint32_t>(Codec::kRaw);
  if (relocations % 4 || relocations > kMaxRelocationTable || (raw && relocations > payload_size))
    return fail("the kpack record's relocation table size is not whole words that fit the payload", relocations);
  if (info.flags & ~kRecordKnownFlags) return fail("unknown flags in the kpack record", info.flags);
  if (raw && (info.flags & kRecordRelocationPlanes))
    return fail("the kpack record codes a raw payload's relocation table", info.flags);
  uint32_t digest = info.digest, frames = info.frame_count;
  if (digest > static_cast<uint32_t>(FrameDigest::kXxh3) ||
      (digest == static_cast<uint32_t>(FrameDigest::kNone)) != raw)
    return fail("the kpack record names no digest its codec can use", digest);
  uint64_t table = info.frame_table_offset, table_bytes = uint64_t{frames} * sizeof(FrameEntry);
  if (raw ? frames != 0 : (frames == 0 || frames > kMaxFrames))
    return fail("the kpack record's frame count does not suit its codec", frames);
  if (!raw && (table < stub_end || table > payload_offset || table_bytes > payload_offset - table))
    return fail("the kpack record's frame table lies outside the space before the payload", table, frames);
  return StubStatus::success();
}

}  // namespace kpack
