#include "unpack.h"

#include "arena.h"
#include "frame_decoder.h"

namespace kpack {
namespace {

uint64_t destination_of(const UnpackResult& r, const LoadSegment& s) {
  return r.base + (s.paddr - r.kernel.physical.begin);
}

// Bytes past p_filesz up to p_memsz are the kernel's to find zeroed.
StubStatus zero_tails(UnpackResult& r, PhysicalMemory& memory) {
  for (uint32_t i = 0; i < r.kernel.segment_count; ++i) {
    const LoadSegment& s = r.kernel.segments[i];
    uint64_t tail = s.memsz - s.filesz;
    if (!tail) continue;
    uint8_t* dst = memory.writable(destination_of(r, s) + s.filesz, tail);
    if (!dst) return fail("segment tail is not writable", destination_of(r, s) + s.filesz, tail);
    __builtin_memset(dst, 0, tail);
  }
  return StubStatus::success();
}

// A raw payload is laid out so its segments sit at run addresses relative to each other; when the
// loader put it at a suitable address nothing moves, otherwise one memmove takes it elsewhere.
StubStatus unpack_raw(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                      UnpackTrace& trace, UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  if (!is_physically_mirrored(k)) return fail("raw payload is not laid out in physical order");
  uint64_t source = request.payload_addr + k.segments[0].offset;
  uint64_t length = k.file_end - k.segments[0].offset;
  // Everything before the first segment (stub, headers) stays live; the segments may be moved over.
  FreeMemory room = free;
  KPACK_TRY(room.remove(Range{request.image.begin, source}));
  KPACK_TRY(room.remove(r.work));
  if (source % k.alignment == 0 && source >= request.min_kernel_address &&
      room.contains(range_of(source, k.span()))) {
    r.base = source;
    r.in_place = true;
  } else {
    if (!room.lowest_fit(k.span(), k.alignment, request.min_kernel_address, &r.base))
      return fail("no room for the kernel in memory", k.span());
    const uint8_t* from = memory.readable(source, length);
    uint8_t* to = memory.writable(r.base, length);
    if (!from || !to) return fail("cannot move the raw kernel", source, r.base);
    __builtin_memmove(to, from, length);
    r.moved = length;
  }
  trace.phase(r.in_place ? "raw in place" : "raw moved", r.moved);
  return zero_tails(r, memory);
}

StubStatus unpack_compressed(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                             UnpackTrace& trace, UnpackResult& r, FrameDecoder& decoder, uint8_t* scratch,
                             const uint8_t* payload, uint64_t cursor) {
  const KernelHeaders& k = r.kernel;
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  KPACK_TRY(room.remove(r.work));
  if (!room.lowest_fit(k.span(), k.alignment, request.min_kernel_address, &r.base))
    return fail("no room for the kernel in memory", k.span());
  trace.phase("placed", k.span());

  uint64_t file_at = k.segments[0].offset;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t consumed = 0, produced = 0;
    if (s.offset > file_at) {
      // Bytes between two segments come in a frame of their own and are not kept.
      uint64_t gap = s.offset - file_at;
      if (gap > kScratchSize) return fail("gap between segments larger than the scratch window", gap);
      KPACK_TRY(decoder.decode(payload + cursor, request.payload_size - cursor, scratch, gap, true, &consumed,
                               &produced));
      cursor += consumed;
    }
    if (s.filesz) {
      uint8_t* dst = memory.writable(destination_of(r, s), s.filesz);
      if (!dst) return fail("segment destination is not writable", destination_of(r, s), s.filesz);
      KPACK_TRY(decoder.decode(payload + cursor, request.payload_size - cursor, dst, s.filesz, true, &consumed,
                               &produced));
      cursor += consumed;
      r.decoded += produced;
    }
    file_at = s.offset + s.filesz;
    trace.phase("segment", s.filesz);
  }
  return zero_tails(r, memory);
}

}  // namespace

StubStatus unpack_kernel(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                         UnpackTrace& trace, UnpackResult* result) {
  UnpackResult r;
  const uint8_t* payload = memory.readable(request.payload_addr, request.payload_size);
  if (!payload || request.payload_size == 0) return fail("payload is not in memory", request.payload_addr);
  if (!request.image.contains(range_of(request.payload_addr, request.payload_size)))
    return fail("payload lies outside the image", request.payload_addr);

  // The work area (scratch window and codec state) goes high, out of the way of the kernel.
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  uint64_t work = 0;
  if (!room.highest_fit(kWorkSize, 4096, &work)) return fail("no room for the stub's work area", kWorkSize);
  r.work = range_of(work, kWorkSize);
  uint8_t* work_bytes = memory.writable(work, kWorkSize);
  if (!work_bytes) return fail("work area is not writable", work);
  uint8_t* scratch = work_bytes;
  Arena arena(work_bytes + kScratchSize, kArenaSize);

  if (request.codec == Codec::kRaw) {
    KPACK_TRY(parse_kernel_headers(payload, request.payload_size, request.payload_size, &r.kernel));
    trace.phase("headers", r.kernel.headers_end);
    KPACK_TRY(unpack_raw(request, free, memory, trace, r));
  } else {
    FrameDecoder decoder;
    KPACK_TRY(decoder.init(request.codec, arena));
    uint64_t consumed = 0, produced = 0;
    KPACK_TRY(decoder.decode(payload, request.payload_size, scratch, kScratchSize, false, &consumed, &produced));
    KPACK_TRY(parse_kernel_headers(scratch, produced, ~0ull, &r.kernel));
    if (produced != r.kernel.segments[0].offset)
      return fail("first payload frame does not end where the first segment starts", produced);
    trace.phase("headers", produced);
    KPACK_TRY(unpack_compressed(request, free, memory, trace, r, decoder, scratch, payload, consumed));
  }
  r.entry = r.base + (r.kernel.entry - r.kernel.physical.begin);
  *result = r;
  return StubStatus::success();
}

}  // namespace kpack
