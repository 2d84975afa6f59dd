#include "stub/unpack/frame_table.h"

#include "formats/call_targets.h"

namespace kpack {

StubStatus check_frame_table(const FrameEntry* frames, uint32_t count, uint64_t payload_size,
                             uint64_t relocations_size) {
  if (count == 0 || count > kMaxFrames) return fail("bad number of payload frames", count);
  if (relocations_size && count < 2) return fail("payload has no frame for its relocation table");
  uint64_t payload_at = 0, file_at = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const FrameEntry& f = frames[i];
    uint64_t packed = f.payload_size, size = f.size;
    if (f.payload_offset != payload_at) return fail("payload frames are not contiguous", i, payload_at);
    if (f.file_offset != file_at) return fail("payload frames do not cover the kernel file in order", i, file_at);
    if (packed == 0 || packed > payload_size - payload_at) return fail("payload frame lies outside the payload", i);
    if (size == 0 || size > kMaxFrameSize) return fail("payload frame has a bad size", i, size);
    if (f.coding >= kFrameCodingCount) return fail("payload frame has an unknown coding", i, f.coding);
    payload_at += packed;
    file_at += size;
  }
  if (payload_at != payload_size) return fail("payload frames do not fill the payload", payload_at, payload_size);
  if (relocations_size && frames[count - 1].size != relocations_size)
    return fail("the last payload frame is not the relocation table", frames[count - 1].size, relocations_size);
  if (relocations_size && frames[count - 1].coding != static_cast<uint64_t>(FrameCoding::kNone))
    return fail("the relocation table's frame has a coding", frames[count - 1].coding);
  return StubStatus::success();
}

StubStatus frame_target(const KernelHeaders& kernel, const FrameEntry& f, uint64_t* kernel_offset) {
  uint64_t begin = f.file_offset, end = begin + f.size;
  if (end > kernel.file_end) return fail("payload frame ends past the kernel's last segment", begin, end);
  *kernel_offset = kNotKept;
  for (uint32_t i = 0; i < kernel.segment_count; ++i) {
    const LoadSegment& s = kernel.segments[i];
    uint64_t s_end = s.offset + s.filesz;
    if (end <= s.offset || begin >= s_end) continue;
    if (begin < s.offset || end > s_end) return fail("payload frame straddles a segment's edge", begin, end);
    *kernel_offset = (s.paddr - kernel.physical.begin) + (begin - s.offset);
    return StubStatus::success();
  }
  return StubStatus::success();
}

// A heap sort: no recursion, and no quadratic case on a table of kMaxFrames.
void order_by_cost(const FrameEntry* frames, uint32_t count, uint32_t* order) {
  auto goes_before = [frames](uint32_t a, uint32_t b) {
    uint64_t cost_a = frames[a].payload_size, cost_b = frames[b].payload_size;
    return cost_a > cost_b || (cost_a == cost_b && a < b);
  };
  // The heap's root is the frame that goes last of those in [0, size).
  auto sift_down = [&](uint32_t at, uint32_t size) {
    for (uint32_t child; (child = 2 * at + 1) < size; at = child) {
      if (child + 1 < size && goes_before(order[child], order[child + 1])) ++child;
      if (!goes_before(order[at], order[child])) return;
      uint32_t held = order[at];
      order[at] = order[child], order[child] = held;
    }
  };
  uint32_t n = count ? count - 1 : 0;
  for (uint32_t i = 0; i < n; ++i) order[i] = i + 1;
  for (uint32_t at = n / 2; at-- > 0;) sift_down(at, n);
  for (uint32_t size = n; size > 1; --size) {
    uint32_t last = order[0];
    order[0] = order[size - 1], order[size - 1] = last;
    sift_down(0, size - 1);
  }
}

StubStatus decode_frame(FrameDecoder& decoder, const uint8_t* payload, const FrameEntry& f, uint32_t index,
                        FrameDigest digest, uint8_t* dst) {
  const uint8_t* src = payload + f.payload_offset;
  // Decoded first, then hashed while the decoder has just pulled the frame into cache: hashing first
  // read it from memory for the hash alone (doc/benchmark-history.md, "Figures the code rests on").
  // A damaged frame's decode writes only inside its own place [dst, dst + f.size), which nothing
  // uses before every frame is proved, and its digest is reported before the decoder's complaint.
  uint64_t consumed = 0, produced = 0;
  StubStatus decoded = decoder.decode(src, f.payload_size, dst, f.size, true, &consumed, &produced);
  if (digest == FrameDigest::kXxh3 && !decoder.xxh3_matches(src, f.payload_size, f.digest))
    return fail("payload frame digest mismatch (corrupt payload)", index);
  KPACK_TRY(decoded);
  if (consumed != f.payload_size) return fail("payload frame is shorter than the frame table says", index, consumed);
  undo_frame_coding(f, dst);
  return StubStatus::success();
}

}  // namespace kpack
