#include "stub/unpack/unpack.h"

#include <new>

#include "stub/base/arena.h"
#include "stub/unpack/frame_decoder.h"
#include "stub/unpack/frame_table.h"
#include "stub/unpack/relocation_table.h"
#include "stub/unpack/stub_codec.h"

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

// The kernel's physical address in `room`: a uniformly drawn slot when asked (and one exists
// within what the command line allows and memory can reach), else the lowest fit at or above the floor.
StubStatus place_kernel(const UnpackRequest& request, const FreeMemory& room, PhysicalMemory& memory, UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  if (request.kaslr.physical) {
    FreeMemory allowed = room;
    KPACK_TRY(apply_kaslr_options(request.kaslr.options, allowed));
    uint64_t reachable = memory.reachable_below(k.span());
    uint64_t limit = reachable < kMaxPhysicalAddress ? reachable : kMaxPhysicalAddress;
    if (!request.kaslr.options.too_many_memmaps)
      r.physical_slots = count_slots(allowed, k.span(), k.alignment, request.min_kernel_address, limit);
    if (r.physical_slots) {
      r.base = slot_address(allowed, k.span(), k.alignment, request.min_kernel_address, limit,
                            request.kaslr.physical_random % r.physical_slots);
      return StubStatus::success();
    }
    r.physical_fallback = true;
  }
  if (!room.lowest_fit(k.span(), k.alignment, request.min_kernel_address, &r.base))
    return fail("no room for the kernel in memory", k.span());
  return StubStatus::success();
}

// The bss and the other bytes past p_filesz, cut into pieces the queue hands out after the
// frames: zeroing a kernel's bss is a fair share of lz4's work, too much to leave to one CPU.
inline constexpr uint64_t kZeroPiece = 1 << 20;
inline constexpr uint32_t kMaxZeroPieces = 256;

struct ZeroPieces {
  struct Piece {
    uint8_t* at;
    uint64_t size;
  } pieces[kMaxZeroPieces];
  uint32_t count = 0;
};

// The frames after the headers', the costliest first (`order`), then the zero pieces, handed out
// one at a time to the caller and its helpers. A worker stops at its first error; the engine
// reports the error of the failing frame handed out first.
struct FrameQueue {
  const KernelHeaders* kernel;
  const FrameEntry* frames;
  const uint8_t* payload;
  uint8_t* kernel_bytes;  // the kernel's physical range, from its lowest segment
  uint8_t* table;         // where the relocation table goes (nullptr: not decoded)
  uint32_t elf_frames, count;
  Codec codec;
  FrameDigest digest;
  FrameDecoder* caller_decoder;
  uint8_t* helper_arenas;  // one arena of `arena_size` per helper, after each other
  uint64_t arena_size;
  uint64_t working_set;  // the most bytes one item touches: FrameWorkers::before_decoding
  FrameWorkers* workers = nullptr;
  ZeroPieces zero = {};   // items count .. count + zero.count - 1
  const uint32_t* order;  // frames 1 .. count - 1, costliest first (order_by_cost)
  uint32_t next = 0;      // the next position to hand out
  uint32_t failed = 0;
  uint64_t done[(kMaxFrames + kMaxZeroPieces) / 64] =
      {};  // items finished: frames proved at their place, pieces zeroed
  uint64_t decoded = 0;
  uint32_t frames_by[kMaxFrameWorkers + 1] = {};
  uint32_t fail_position[kMaxFrameWorkers + 1] = {};
  StubStatus status[kMaxFrameWorkers + 1] = {};

  // The queue's positions: the ordered frames, then the zero pieces.
  uint32_t positions() const { return count - 1 + zero.count; }
  uint32_t item_at(uint32_t position) const {
    return position < count - 1 ? order[position] : count + (position - (count - 1));
  }
};

// The work area, from its start: the scratch window, the frame queue (compressed payloads), the
// caller's codec arena, one arena per helper, the decoded relocation table (and its coded frame),
// then what the helpers need for themselves (stacks).
static_assert(sizeof(FrameQueue) <= kFrameQueueRoom);

struct WorkArea {
  uint8_t* scratch = nullptr;  // kScratchSize bytes: the ELF headers
  uint8_t* queue = nullptr;    // frame_queue_room bytes (nullptr: raw)
  uint32_t* order = nullptr;   // its words past kFrameQueueRoom: FrameQueue::order
  uint8_t* arenas = nullptr;   // 1 + helpers arenas of arena_size, the caller's first
  uint64_t arena_size = 0;
  uint8_t* table = nullptr;   // where the relocation table is decoded (nullptr: it is not)
  uint8_t* planes = nullptr;  // where its frame is decoded when coded, after it (else `table`)
  uint32_t helpers = 0;       // as many as the memory allows
  Range helper_memory;
};

// As many helpers as asked for and the engine has room to track.
uint32_t helpers_asked(const UnpackRequest& request) {
  if (request.codec == Codec::kRaw || !request.workers) return 0;
  return request.max_workers < kMaxFrameWorkers ? request.max_workers : kMaxFrameWorkers;
}

// The work area goes high, out of the way of the kernel, but below 4 GiB, and never on `kernel_in_place`;
// each helper costs a codec state of its own, so fewer helpers start when the memory is short.
StubStatus reserve_work_area(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                             const uint8_t* payload, bool virtual_base, Range kernel_in_place, UnpackResult& r,
                             WorkArea* area) {
  bool compressed = request.codec != Codec::kRaw;
  // A raw payload's table lies where its segments move up to: it is copied here first. A coded
  // table's frame is decoded beside the room its words are rebuilt in.
  uint64_t table_room = virtual_base ? align_up(request.relocations_size, 4096) : 0;
  uint64_t planes_room = request.relocation_planes ? table_room : 0;
  uint64_t codec_state = 0;
  if (compressed) KPACK_TRY(codec_state_size(request.codec, payload, request.payload_size, &codec_state));
  uint64_t arena_size = kArenaSize + align_up(codec_state, 4096);
  uint64_t queue_room = compressed ? frame_queue_room(request.frame_count) : 0;
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  KPACK_TRY(room.remove(kernel_in_place));
  KPACK_TRY(room.remove(Range{kWorkAreaLimit, ~0ull}));
  uint64_t work = 0, work_size = 0, helper_bytes = 0;
  for (uint32_t helpers = helpers_asked(request);; --helpers) {
    helper_bytes = helpers ? align_up(request.workers->memory_for(helpers), 4096) : 0;
    work_size = kScratchSize + queue_room + (1 + helpers) * arena_size + table_room + planes_room + helper_bytes;
    if (room.highest_fit(work_size, 4096, &work)) {
      area->helpers = helpers;
      break;
    }
    if (helpers == 0) return fail("no room for the stub's work area", work_size);
  }
  r.work = range_of(work, work_size);
  uint8_t* bytes = memory.writable(work, work_size);
  if (!bytes) return fail("work area is not writable", work);
  area->scratch = bytes;
  area->queue = queue_room ? bytes + kScratchSize : nullptr;
  area->order = queue_room ? reinterpret_cast<uint32_t*>(area->queue + kFrameQueueRoom) : nullptr;
  area->arenas = bytes + kScratchSize + queue_room;
  area->arena_size = arena_size;
  area->table = table_room ? area->arenas + (1 + area->helpers) * arena_size : nullptr;
  area->planes = planes_room ? area->table + table_room : area->table;
  area->helper_memory = range_of(work + work_size - helper_bytes, helper_bytes);
  return StubStatus::success();
}

// A raw payload's ELF headers, read where they lie: its segments are in physical order, each at
// most as far from the first as in memory (the zeros between them are not in the file).
StubStatus read_raw_headers(const UnpackRequest& request, const uint8_t* payload, UnpackTrace& trace, UnpackResult& r) {
  KPACK_TRY(
      parse_kernel_headers(payload, request.payload_size, request.payload_size - request.relocations_size, &r.kernel));
  honor_min_alignment(request, r.kernel);
  trace.phase("headers", r.kernel.headers_end);
  if (!is_physically_ordered(r.kernel)) return fail("raw payload is not laid out in physical order");
  return StubStatus::success();
}

// Where a raw kernel runs when its first segment stays where the loader put it: the whole span
// from there, bss included, which the file may end before.
Range raw_kernel_in_place(const UnpackRequest& request, const KernelHeaders& k) {
  return range_of(request.payload_addr + k.segments[0].offset, k.span());
}

// How much farther from the first segment the last one lies in memory than in the file.
uint64_t raw_spread(const KernelHeaders& k) {
  const LoadSegment &first = k.segments[0], &last = k.segments[k.segment_count - 1];
  return (last.paddr - first.paddr) - (last.offset - first.offset);
}

// Copies `size` bytes from `from` up to `to` (to > from, overlapping or not) in pieces that do not
// overlap, the highest first, each one a forward `rep movsq`: the stub's backward memmove moves a
// word per loop and costs several times as much. Segments move up by whole pages in real kernels.
void copy_up(uint8_t* to, const uint8_t* from, uint64_t size) {
  uint64_t distance = static_cast<uint64_t>(to - from);
  while (size) {
    uint64_t piece = size < distance ? size : distance;
    size -= piece;
    __builtin_memcpy(to + size, from + size, piece);
  }
}

// Each segment to its place from `source`, where the first one lies, the highest first: every
// one moves up (or down, wholly below `source`) without overwriting one not moved yet.
StubStatus move_raw_segments(uint64_t source, PhysicalMemory& memory, UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  for (uint32_t i = k.segment_count; i-- > 0;) {
    const LoadSegment& s = k.segments[i];
    uint64_t from = source + (s.offset - k.segments[0].offset), to = destination_of(r, s);
    if (from == to || !s.filesz) continue;
    const uint8_t* in = memory.readable(from, s.filesz);
    uint8_t* out = memory.writable(to, s.filesz);
    if (!in || !out) return fail("cannot move the raw kernel", from, to);
    if (to > from)
      copy_up(out, in, s.filesz);
    else
      __builtin_memmove(out, in, s.filesz);
    r.moved += s.filesz;
  }
  return StubStatus::success();
}

// The first segment stays where the loader put it when that is a suitable address, and the others
// move up to it; otherwise (or when a random physical slot is asked for) every segment moves once.
StubStatus unpack_raw(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory, UnpackTrace& trace,
                      UnpackResult& r) {
  const KernelHeaders& k = r.kernel;
  uint64_t source = request.payload_addr + k.segments[0].offset;
  // Everything before the first segment (stub, headers) stays live; the segments may be moved over.
  // A kernel put lower than `source` lies wholly below the segments' spread under it, so that
  // every segment moves the same way.
  FreeMemory room = free;
  uint64_t spread = raw_spread(k);
  KPACK_TRY(room.remove(Range{request.image.begin, source}));
  KPACK_TRY(room.remove(Range{source > spread ? source - spread : 0, source}));
  KPACK_TRY(room.remove(r.work));
  if (!request.kaslr.physical && source % k.alignment == 0 && source >= request.min_kernel_address &&
      room.contains(raw_kernel_in_place(request, k))) {
    r.base = source;
    r.in_place = true;
  } else {
    KPACK_TRY(place_kernel(request, room, memory, r));
  }
  KPACK_TRY(move_raw_segments(source, memory, r));
  trace.phase(r.in_place ? "raw in place" : "raw moved", r.moved);
  return StubStatus::success();
}

// The segments' tails (past p_filesz), but for the bytes the kernel clears itself, cut into
// pieces. Each tail is split around that range: the part below it and the part above it, either
// empty when the tail lies wholly on one side.
StubStatus cut_zero_pieces(const UnpackRequest& request, const UnpackResult& r, PhysicalMemory& memory,
                           ZeroPieces* out) {
  Range parts[2 * kMaxLoadSegments];  // offsets from the kernel's lowest physical address
  uint32_t count = 0;
  uint64_t total = 0;
  const Range kernels = request.cleared_by_kernel;
  for (uint32_t i = 0; i < r.kernel.segment_count; ++i) {
    const LoadSegment& s = r.kernel.segments[i];
    uint64_t at = s.paddr - r.kernel.physical.begin;  // parse_kernel_headers ruled out wrapping
    Range tail{at + s.filesz, at + s.memsz};
    Range sides[2] = {{tail.begin, tail.end < kernels.begin ? tail.end : kernels.begin},
                      {tail.begin > kernels.end ? tail.begin : kernels.end, tail.end}};
    for (Range part : sides)
      if (!part.empty()) parts[count++] = part, total += part.size();
  }
  // Each part ends in a partial piece at most: `count` of them besides total / piece.
  uint64_t piece = kZeroPiece;
  while (total / piece + count > kMaxZeroPieces) piece *= 2;
  out->count = 0;
  for (uint32_t p = 0; p < count; ++p) {
    uint64_t size = parts[p].size();
    uint8_t* dst = memory.writable(r.base + parts[p].begin, size);
    if (!dst) return fail("segment tail is not writable", r.base + parts[p].begin, size);
    for (uint64_t at = 0; at < size; at += piece)
      out->pieces[out->count++] = {dst + at, size - at < piece ? size - at : piece};
  }
  return StubStatus::success();
}

// Where item `i` goes: a frame's place in the kernel (nullptr for bytes between segments, which
// nobody keeps) or the relocation table's, or a zero piece.
StubStatus item_destination(const FrameQueue& q, uint32_t i, uint8_t** dst, uint64_t* size) {
  if (i >= q.count) {
    *dst = q.zero.pieces[i - q.count].at, *size = q.zero.pieces[i - q.count].size;
    return StubStatus::success();
  }
  *dst = q.table, *size = q.frames[i].size;
  if (i >= q.elf_frames) return StubStatus::success();
  uint64_t offset = 0;
  KPACK_TRY(frame_target(*q.kernel, q.frames[i], &offset));
  *dst = offset != kNotKept ? q.kernel_bytes + offset : nullptr;
  return StubStatus::success();
}

// The item at queue `position` on `worker`: a frame decoded straight to its place and proved there
// (a frame of bytes between segments is skipped), or a zero piece; then marked done. False on an
// error, recorded for the worker.
bool handle_item(FrameQueue& q, uint32_t position, FrameDecoder& decoder, uint32_t worker) {
  uint32_t i = q.item_at(position);
  uint8_t* dst = nullptr;
  uint64_t size = 0;
  StubStatus status = item_destination(q, i, &dst, &size);
  if (status.ok() && dst && i >= q.count) {
    __builtin_memset(dst, 0, size);
  } else if (status.ok() && dst) {
    status = decode_frame(decoder, q.payload, q.frames[i], i, q.digest, dst);
    if (status.ok()) {
      ++q.frames_by[worker];
      if (i < q.elf_frames) __atomic_fetch_add(&q.decoded, uint64_t{q.frames[i].size}, __ATOMIC_RELAXED);
    }
  }
  if (!status.ok()) {
    q.status[worker] = status, q.fail_position[worker] = position;
    __atomic_store_n(&q.failed, 1, __ATOMIC_RELEASE);
    return false;
  }
  __atomic_fetch_or(&q.done[i / 64], uint64_t{1} << (i % 64), __ATOMIC_RELEASE);
  return true;
}

// A worker the test hook holds (FrameWorkers::holds): it takes an item, scrambles the bytes the
// item would write and stays there; as far as the engine knows for good, so the item stays undone.
void hold_in_item(FrameQueue& q, uint32_t i, uint32_t worker) {
  uint8_t* dst = nullptr;
  uint64_t size = 0;
  if (item_destination(q, i, &dst, &size).ok() && dst) __builtin_memset(dst, 0xCC, size);
  q.workers->hold(worker);
}

void decode_frames(void* arg, uint32_t worker) {
  FrameQueue& q = *static_cast<FrameQueue*>(arg);
  FrameDecoder own;
  FrameDecoder* decoder = q.caller_decoder;
  Arena arena;
  if (worker != 0) {
    arena = Arena(q.helper_arenas + (worker - 1) * q.arena_size, q.arena_size);
    q.status[worker] = own.init(q.codec, arena, q.digest != FrameDigest::kXxh3);
    if (!q.status[worker].ok()) {
      q.fail_position[worker] = 0;
      __atomic_store_n(&q.failed, 1, __ATOMIC_RELEASE);
      return;
    }
    decoder = &own;
  }
  if (q.workers) q.workers->before_decoding(worker, q.kernel_bytes, q.kernel->span(), q.working_set);
  bool held = worker != 0 && q.workers->holds(worker);
  while (!__atomic_load_n(&q.failed, __ATOMIC_ACQUIRE)) {
    uint32_t position = __atomic_fetch_add(&q.next, 1, __ATOMIC_RELAXED);
    if (position >= q.positions()) return;
    if (held) return hold_in_item(q, q.item_at(position), worker);
    if (!handle_item(q, position, *decoder, worker)) return;
  }
}

bool is_done(const FrameQueue& q, uint32_t i) {
  return __atomic_load_n(&q.done[i / 64], __ATOMIC_ACQUIRE) & (uint64_t{1} << (i % 64));
}

// A helper stopped while it decoded (FrameWorkers::finish) leaves its item undone, maybe half
// written: the caller does every such item again, from scratch. Returns how many it did.
uint32_t redo_unfinished(FrameQueue& q) {
  uint32_t taken = q.next < q.positions() ? q.next : q.positions();
  uint32_t redone = 0;
  for (uint32_t position = 0; position < taken && !q.failed; ++position) {
    if (is_done(q, q.item_at(position))) continue;
    if (!handle_item(q, position, *q.caller_decoder, 0)) break;
    ++redone;
  }
  return redone;
}

// The frame table, where the record says: inside the image, and covering the payload as
// check_frame_table asks, before any frame is trusted.
StubStatus read_frame_table(const UnpackRequest& request, PhysicalMemory& memory, const FrameEntry** out) {
  const uint64_t table_bytes = uint64_t{request.frame_count} * sizeof(FrameEntry);
  const FrameEntry* frames = reinterpret_cast<const FrameEntry*>(
      request.frame_count <= kMaxFrames ? memory.readable(request.frame_table_addr, table_bytes) : nullptr);
  if (!frames || !request.image.contains(range_of(request.frame_table_addr, table_bytes)))
    return fail("the payload's frame table lies outside the image", request.frame_table_addr, request.frame_count);
  KPACK_TRY(check_frame_table(frames, request.frame_count, request.payload_size, request.relocations_size));
  *out = frames;
  return StubStatus::success();
}

// The first frame holds the ELF headers: decoded and proved before anything is parsed.
StubStatus read_compressed_headers(const UnpackRequest& request, const uint8_t* payload, const FrameEntry& first,
                                   FrameDecoder& decoder, uint8_t* scratch, UnpackTrace& trace, UnpackResult& r) {
  if (first.size > kScratchSize) return fail("the kernel's ELF headers are larger than the scratch window", first.size);
  KPACK_TRY(decode_frame(decoder, payload, first, 0, request.digest, scratch));
  KPACK_TRY(parse_kernel_headers(scratch, first.size, ~0ull, &r.kernel));
  if (first.size != r.kernel.segments[0].offset)
    return fail("first payload frame does not end where the first segment starts", first.size);
  honor_min_alignment(request, r.kernel);
  trace.phase("headers", first.size);
  return StubStatus::success();
}

// The kernel's whole span, writable before any frame is decoded: the frames land in any order.
StubStatus place_compressed(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                            UnpackTrace& trace, UnpackResult& r, uint8_t** kernel_bytes) {
  const KernelHeaders& k = r.kernel;
  FreeMemory room = free;
  KPACK_TRY(room.remove(request.image));
  KPACK_TRY(room.remove(r.work));
  KPACK_TRY(place_kernel(request, room, memory, r));
  trace.phase("placed", k.span());
  *kernel_bytes = memory.writable(r.base, k.span());
  if (!*kernel_bytes) return fail("kernel destination is not writable", r.base, k.span());
  return StubStatus::success();
}

// The most bytes one frame reads and writes: its compressed and its decoded bytes.
uint64_t largest_frame(const FrameEntry* frames, uint32_t count) {
  uint64_t largest = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t bytes = frames[i].payload_size + frames[i].size;
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

// The frames before the relocation table's; the last of them must end the kernel's last segment.
StubStatus count_elf_frames(const UnpackRequest& request, const FrameEntry* frames, const KernelHeaders& k,
                            uint32_t* count) {
  *count = request.frame_count - (request.relocations_size ? 1 : 0);
  const FrameEntry& last = frames[*count - 1];
  if (last.file_offset + last.size != k.file_end)
    return fail("payload frames do not end with the kernel's last segment", k.file_end);
  return StubStatus::success();
}

// The caller decodes alongside whatever helpers start, then redoes what a stopped helper left undone.
void run_queue(FrameQueue& q, const WorkArea& work, UnpackResult& r) {
  if (work.helpers) r.workers_started = q.workers->start(decode_frames, &q, work.helpers, work.helper_memory);
  decode_frames(&q, 0);
  if (work.helpers) {
    q.workers->finish();
    r.redone = redo_unfinished(q);
  }
}

// The error of the failing frame handed out first, the one a single CPU would have met (every
// frame handed out before it was finished, by whichever worker took it); without one, who decoded
// what.
StubStatus collect_queue(const FrameQueue& q, UnpackResult& r) {
  uint32_t first_failure = ~0u;
  StubStatus status = StubStatus::success();
  for (uint32_t w = 0; w <= r.workers_started; ++w) {
    r.frames += q.frames_by[w];
    if (!q.status[w].ok() && q.fail_position[w] < first_failure)
      status = q.status[w], first_failure = q.fail_position[w];
  }
  KPACK_TRY(status);
  r.frames_by_caller = q.frames_by[0];
  r.decoded = q.decoded;
  return StubStatus::success();
}

// Every frame after the headers' goes straight to its place in the kernel (or, the relocation
// table, to the work area's), on the caller and whatever helpers start; frames of bytes between
// segments are not decoded at all.
StubStatus unpack_compressed(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                             const uint8_t* payload, const WorkArea& work, UnpackTrace& trace, UnpackResult& r) {
  const FrameEntry* frames = nullptr;
  KPACK_TRY(read_frame_table(request, memory, &frames));
  FrameDecoder decoder;
  Arena arena(work.arenas, work.arena_size);
  KPACK_TRY(decoder.init(request.codec, arena, request.digest != FrameDigest::kXxh3));
  KPACK_TRY(read_compressed_headers(request, payload, frames[0], decoder, work.scratch, trace, r));
  uint8_t* kernel_bytes = nullptr;
  KPACK_TRY(place_compressed(request, free, memory, trace, r, &kernel_bytes));
  uint32_t elf_frames = 0;
  KPACK_TRY(count_elf_frames(request, frames, r.kernel, &elf_frames));
  // In the work area, not on the stack (kFrameQueueRoom).
  FrameQueue& queue =
      *new (work.queue) FrameQueue{.kernel = &r.kernel,
                                   .frames = frames,
                                   .payload = payload,
                                   .kernel_bytes = kernel_bytes,
                                   .table = work.planes,
                                   .elf_frames = elf_frames,
                                   .count = request.frame_count,
                                   .codec = request.codec,
                                   .digest = request.digest,
                                   .caller_decoder = &decoder,
                                   .helper_arenas = work.arenas + work.arena_size,
                                   .arena_size = work.arena_size,
                                   .working_set = largest_frame(frames, request.frame_count) + work.arena_size,
                                   .workers = request.workers,
                                   .order = work.order};
  order_by_cost(frames, request.frame_count, work.order);
  // Bytes past p_filesz up to p_memsz are the kernel's to find zeroed, but for its bss and brk.
  KPACK_TRY(cut_zero_pieces(request, r, memory, &queue.zero));
  run_queue(queue, work, r);
  KPACK_TRY(collect_queue(queue, r));
  trace.phase("segments", r.decoded);
  return StubStatus::success();
}

// Moves the kernel's virtual base by a random offset with the relocation table at `table`.
StubStatus randomize_virtual_base(const UnpackRequest& request, const uint8_t* table, PhysicalMemory& memory,
                                  UnpackTrace& trace, UnpackResult& r) {
  RelocationTable relocations;
  r.virtual_offset =
      random_virtual_offset(r.kernel.physical.begin, r.kernel.span(), request.kaslr.virtual_random, &r.virtual_slots);
  KPACK_TRY(relocate_kernel(table, request.relocations_size, r.kernel, r.base, r.virtual_offset, memory, &relocations));
  r.relocations = r.virtual_offset ? relocations.entries() : 0;
  trace.phase("relocated", r.relocations);
  return StubStatus::success();
}

// A raw kernel's tails are zeroed once every segment has moved: a tail may lie where a higher
// segment's bytes were (the queue zeroed a compressed kernel's with the frames).
StubStatus zero_raw_tails(const UnpackRequest& request, const UnpackResult& r, PhysicalMemory& memory) {
  ZeroPieces tails;
  KPACK_TRY(cut_zero_pieces(request, r, memory, &tails));
  for (uint32_t p = 0; p < tails.count; ++p) __builtin_memset(tails.pieces[p].at, 0, tails.pieces[p].size);
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
  // A stub meets its own codec only: the other path is compiled out of it (stub_codec.h).
  if (!engine_meets(request.codec)) return fail("unknown payload codec", static_cast<uint32_t>(request.codec));
  bool raw = engine_meets(Codec::kRaw) && request.codec == Codec::kRaw;
  bool virtual_base = request.kaslr.virtual_base && request.relocations_size;
  // A raw kernel's headers first: the work area keeps off the place it runs without a move.
  if (raw) KPACK_TRY(read_raw_headers(request, payload, trace, r));
  Range kernel_in_place = raw ? raw_kernel_in_place(request, r.kernel) : Range{};
  WorkArea work;
  KPACK_TRY(reserve_work_area(request, free, memory, payload, virtual_base, kernel_in_place, r, &work));
  // A raw payload's relocation table is its last bytes, copied aside before the segments move over
  // them; a compressed payload's is its last frame, decoded there.
  if (raw && work.table)
    __builtin_memcpy(work.table, payload + request.payload_size - request.relocations_size, request.relocations_size);
  if (raw) KPACK_TRY(unpack_raw(request, free, memory, trace, r));
  if (!raw) KPACK_TRY(unpack_compressed(request, free, memory, payload, work, trace, r));
  if (work.table != work.planes) decode_relocation_planes(work.planes, request.relocations_size, work.table);
  if (virtual_base) KPACK_TRY(randomize_virtual_base(request, work.table, memory, trace, r));
  if (raw) KPACK_TRY(zero_raw_tails(request, r, memory));
  r.entry = r.base + (r.kernel.entry - r.kernel.physical.begin);
  *result = r;
  return StubStatus::success();
}

}  // namespace kpack
