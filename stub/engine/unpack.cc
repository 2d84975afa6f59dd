#include "unpack.h"

#include "arena.h"
#include "frame_decoder.h"
#include "frame_table.h"
#include "relocation_table.h"

namespace kpack {
namespace {

// The work area stays below 4 GiB, inside the stub's identity map of the low memory.
constexpr uint64_t kWorkAreaLimit = 1ull << 32;

// The record's kernel_alignment is a promise to loaders and tools: place at least that aligned.
void honor_min_alignment(const UnpackRequest& request, KernelHeaders& kernel) {
  if (is_power_of_two(request.min_alignment) && request.min_alignment > kernel.alignment)
    kernel.alignment = request.min_alignment;
}

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

// The kernel's physical address in `room`: a uniformly drawn slot when asked (and one exists
// within what the command line allows), else the lowest fit at or above the floor.
StubStatus place_kernel(const UnpackRequest& request, const FreeMemory& room, UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  if (request.kaslr.physical) {
    FreeMemory allowed = room;
    KPACK_TRY(apply_kaslr_options(request.kaslr.options, allowed));
    if (!request.kaslr.options.too_many_memmaps)
      r.physical_slots = count_slots(allowed, k.span(), k.alignment, request.min_kernel_address, kMaxPhysicalAddress);
    if (r.physical_slots) {
      r.base = slot_address(allowed, k.span(), k.alignment, request.min_kernel_address, kMaxPhysicalAddress,
                            request.kaslr.physical_random % r.physical_slots);
      return StubStatus::success();
    }
    r.physical_fallback = true;
  }
  if (!room.lowest_fit(k.span(), k.alignment, request.min_kernel_address, &r.base))
    return fail("no room for the kernel in memory", k.span());
  return StubStatus::success();
}

// A raw payload is laid out so its segments sit at run addresses relative to each other; when the
// loader put it at a suitable address nothing moves, otherwise (or when a random physical slot is
// asked for) one memmove takes it elsewhere.
StubStatus unpack_raw(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                      UnpackTrace& trace, UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  if (!is_physically_mirrored(k)) return fail("raw payload is not laid out in physical order");
  uint64_t source = request.payload_addr + k.segments[0].offset;
  uint64_t length = k.file_end - k.segments[0].offset;
  // Everything before the first segment (stub, headers) stays live; the segments may be moved over.
  // The relocation table after them may lie in the kernel's own bss: zeroing the bss waits until
  // the table has been applied. A moved kernel must not land on it, though.
  FreeMemory room = free;
  KPACK_TRY(room.remove(Range{request.image.begin, source}));
  KPACK_TRY(room.remove(r.work));
  if (!request.kaslr.physical && source % k.alignment == 0 && source >= request.min_kernel_address &&
      room.contains(range_of(source, k.span()))) {
    r.base = source;
    r.in_place = true;
  } else {
    KPACK_TRY(room.remove(range_of(request.payload_addr + request.payload_size - request.relocations_size,
                                   request.relocations_size)));
    KPACK_TRY(place_kernel(request, room, r));
    const uint8_t* from = memory.readable(source, length);
    uint8_t* to = memory.writable(r.base, length);
    if (!from || !to) return fail("cannot move the raw kernel", source, r.base);
    __builtin_memmove(to, from, length);
    r.moved = length;
  }
  trace.phase(r.in_place ? "raw in place" : "raw moved", r.moved);
  return StubStatus::success();
}

// Every frame after the headers' goes straight to its place in the kernel (or, the relocation
// table, to `table`); frames of bytes between segments are not decoded at all.
StubStatus unpack_compressed(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                             UnpackTrace& trace, UnpackResult& r, FrameDecoder& decoder, const uint8_t* payload,
                             const FrameEntry* frames, uint8_t* table) {
  const KernelHeaders& k = r.kernel;
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  KPACK_TRY(room.remove(r.work));
  KPACK_TRY(place_kernel(request, room, r));
  trace.phase("placed", k.span());

  uint8_t* kernel = memory.writable(r.base, k.span());
  if (!kernel) return fail("kernel destination is not writable", r.base, k.span());
  uint32_t elf_frames = request.frame_count - (request.relocations_size ? 1 : 0);
  if (frames[elf_frames - 1].file_offset + frames[elf_frames - 1].size != k.file_end)
    return fail("payload frames do not end with the kernel's last segment", k.file_end);
  for (uint32_t i = 1; i < request.frame_count; ++i) {
    uint8_t* dst = nullptr;
    if (i < elf_frames) {
      uint64_t offset = 0;
      KPACK_TRY(frame_target(k, frames[i], &offset));
      if (offset != kNotKept) dst = kernel + offset;
    } else {
      dst = table;
    }
    if (!dst) continue;
    KPACK_TRY(decode_frame(decoder, payload, frames[i], i, request.digest, dst));
    ++r.frames;
    if (i < elf_frames) r.decoded += frames[i].size;
  }
  trace.phase("segments", r.decoded);
  return StubStatus::success();
}

// Moves the kernel's virtual base by a random offset with the relocation table at `table`.
StubStatus randomize_virtual_base(const UnpackRequest& request, const uint8_t* table, PhysicalMemory& memory,
                                  UnpackTrace& trace, UnpackResult& r) {
  RelocationTable relocations;
  r.virtual_offset = random_virtual_offset(r.kernel.physical.begin, r.kernel.span(), request.kaslr.virtual_random,
                                           &r.virtual_slots);
  KPACK_TRY(relocate_kernel(table, request.relocations_size, r.kernel, r.base, r.virtual_offset, memory, &relocations));
  r.relocations = r.virtual_offset ? relocations.entries() : 0;
  trace.phase("relocated", r.relocations);
  return StubStatus::success();
}

}  // namespace

StubStatus unpack_kernel(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                         UnpackTrace& trace, UnpackResult* result) {
  UnpackResult r;
  const uint8_t* payload = memory.readable(request.payload_addr, request.payload_size);
  if (!payload || request.payload_size == 0) return fail("payload is not in memory", request.payload_addr);
  if (!request.image.contains(range_of(request.payload_addr, request.payload_size)))
    return fail("payload lies outside the image", request.payload_addr);
  bool virtual_base = request.kaslr.virtual_base && request.relocations_size;
  bool compressed = request.codec != Codec::kRaw;

  // The work area (scratch window, codec state, and a decoded relocation table) goes high, out of
  // the way of the kernel, but below 4 GiB.
  uint64_t table_room = virtual_base && compressed ? align_up(request.relocations_size, 4096) : 0;
  uint64_t codec_state = 0;
  if (compressed) KPACK_TRY(codec_state_size(request.codec, payload, request.payload_size, &codec_state));
  uint64_t arena_size = kArenaSize + align_up(codec_state, 4096);
  uint64_t work_size = kScratchSize + arena_size + table_room;
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  KPACK_TRY(room.remove(Range{kWorkAreaLimit, ~0ull}));
  uint64_t work = 0;
  if (!room.highest_fit(work_size, 4096, &work)) return fail("no room for the stub's work area", work_size);
  r.work = range_of(work, work_size);
  uint8_t* work_bytes = memory.writable(work, work_size);
  if (!work_bytes) return fail("work area is not writable", work);
  uint8_t* scratch = work_bytes;
  Arena arena(work_bytes + kScratchSize, arena_size);
  const uint8_t* table = nullptr;

  if (!compressed) {
    KPACK_TRY(parse_kernel_headers(payload, request.payload_size, request.payload_size - request.relocations_size,
                                   &r.kernel));
    honor_min_alignment(request, r.kernel);
    trace.phase("headers", r.kernel.headers_end);
    KPACK_TRY(unpack_raw(request, free, memory, trace, r));
    table = payload + request.payload_size - request.relocations_size;
  } else {
    const uint64_t table_bytes = uint64_t{request.frame_count} * sizeof(FrameEntry);
    const FrameEntry* frames = reinterpret_cast<const FrameEntry*>(
        request.frame_count <= kMaxFrames ? memory.readable(request.frame_table_addr, table_bytes) : nullptr);
    if (!frames || !request.image.contains(range_of(request.frame_table_addr, table_bytes)))
      return fail("the payload's frame table lies outside the image", request.frame_table_addr, request.frame_count);
    KPACK_TRY(check_frame_table(frames, request.frame_count, request.payload_size, request.relocations_size));
    FrameDecoder decoder;
    KPACK_TRY(decoder.init(request.codec, arena, request.digest != FrameDigest::kXxh3));
    // The first frame holds the ELF headers: decoded and proved before anything is parsed.
    if (frames[0].size > kScratchSize) return fail("the kernel's ELF headers are larger than the scratch window", frames[0].size);
    KPACK_TRY(decode_frame(decoder, payload, frames[0], 0, request.digest, scratch));
    KPACK_TRY(parse_kernel_headers(scratch, frames[0].size, ~0ull, &r.kernel));
    if (frames[0].size != r.kernel.segments[0].offset)
      return fail("first payload frame does not end where the first segment starts", frames[0].size);
    honor_min_alignment(request, r.kernel);
    trace.phase("headers", frames[0].size);
    // The relocation table is the last frame (stock images carry it after the ELF too).
    uint8_t* decoded_table = virtual_base ? work_bytes + kScratchSize + arena_size : nullptr;
    KPACK_TRY(unpack_compressed(request, free, memory, trace, r, decoder, payload, frames, decoded_table));
    table = decoded_table;
  }
  if (virtual_base) KPACK_TRY(randomize_virtual_base(request, table, memory, trace, r));
  KPACK_TRY(zero_tails(r, memory));
  r.entry = r.base + (r.kernel.entry - r.kernel.physical.begin);
  *result = r;
  return StubStatus::success();
}

}  // namespace kpack
