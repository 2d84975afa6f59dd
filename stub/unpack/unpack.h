// The unpack engine: reads the kernel's ELF headers from the start of the payload, places the
// kernel in free memory, then writes each PT_LOAD straight to its destination (decoding its frame
// there, or for raw payloads moving it up from where the loader put it, unless it already runs
// there). Compiled into the stub and into
// the host tests and fuzzers, where PhysicalMemory is a checked buffer.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/unpack/frame_workers.h"
#include "stub/machine/free_memory.h"
#include "stub/unpack/kaslr.h"
#include "stub/unpack/kernel_headers.h"
#include "stub/base/physical_memory.h"
#include "stub/base/range.h"
#include "stub/base/status.h"

namespace kpack {

inline constexpr uint64_t kScratchSize = 64 * 1024;  // ELF headers and the bytes between segments
// Codec state (zstd's context is ~94 KiB), plus what codec_state_size says (xz's dictionary).
inline constexpr uint64_t kArenaSize = 448 * 1024;
// A compressed payload's frame queue (13 KB, mostly its done-bitmap for kMaxFrames), kept in the
// work area: on the legacy entries' 32 KiB boot stack it left 1.6 KB to spare. After it, the order
// the CPUs take the frames in, a word per frame (a page for up to 1024).
inline constexpr uint64_t kFrameQueueRoom = 16 * 1024;
inline constexpr uint64_t frame_queue_room(uint32_t frame_count) {
  uint64_t frames = frame_count < kMaxFrames ? frame_count : kMaxFrames;
  return kFrameQueueRoom + align_up(frames * sizeof(uint32_t), 4096);
}
inline constexpr uint64_t kWorkSize = kScratchSize + kArenaSize;  // plus xz's state and the relocation table

// What randomization the run should do, and the random numbers it draws with.
struct KaslrRequest {
  bool physical = false;      // a random physical slot (compressed payloads; raw only when asked)
  bool virtual_base = false;  // a random virtual offset, applied with the relocation table
  uint64_t physical_random = 0;
  uint64_t virtual_random = 0;
  KaslrOptions options;  // mem=, memmap=, hugepages= from the command line
};

struct UnpackRequest {
  Codec codec = Codec::kRaw;
  uint64_t payload_addr = 0;  // physical
  uint64_t payload_size = 0;
  Range image;  // the whole loaded protected-mode part (stub, payload)
  uint64_t min_kernel_address = 0;
  uint64_t min_alignment = 0;      // the kernel's physical alignment is at least this and its own
  uint64_t relocations_size = 0;   // the relocation table's bytes after the ELF in the payload
  bool relocation_planes = false;  // ... coded by code_relocation_planes (kRecordRelocationPlanes)
  // Bytes the kernel clears itself (its bss and brk, PackerRecord), as offsets from its lowest
  // physical address: the stub does not zero them.
  Range cleared_by_kernel;
  KaslrRequest kaslr;
  // Compressed payloads: the frame table (physical address, inside the image) and what proves
  // each frame right.
  uint64_t frame_table_addr = 0;
  uint32_t frame_count = 0;
  FrameDigest digest = FrameDigest::kNone;
  // Helpers that decode frames alongside the caller (nullptr: the caller alone), and how many at
  // most (each costs a codec state in the work area).
  FrameWorkers* workers = nullptr;
  uint32_t max_workers = 0;
};

struct UnpackResult {
  KernelHeaders kernel;
  uint64_t base = 0;               // physical address of the kernel's lowest segment
  uint64_t entry = 0;              // physical entry point
  Range work;                      // where the scratch and codec state lived
  bool in_place = false;           // raw only: the segments were already where they run
  uint64_t moved = 0;              // bytes copied besides decoder output (raw not in place)
  uint64_t decoded = 0;            // bytes written by decoders
  uint32_t frames = 0;             // frames decoded (bytes between segments are skipped)
  uint32_t workers_started = 0;    // helpers that decoded alongside the caller
  uint32_t frames_by_caller = 0;   // of `frames`, how many the caller decoded itself
  uint32_t redone = 0;             // items a stopped helper left undone, which the caller did again
  uint64_t physical_slots = 0;     // the random physical slot was one of these (0: not drawn)
  bool physical_fallback = false;  // asked to randomize, but no slot fit: the lowest fit instead
  uint64_t virtual_offset = 0;     // added to the kernel's virtual base (0: not moved)
  uint64_t virtual_slots = 0;
  uint64_t relocations = 0;  // entries applied
};

// Called after each phase, so the stub can time it and print it with kpack.debug.
class UnpackTrace {
 public:
  virtual void phase(const char* name, uint64_t bytes) = 0;

 protected:
  ~UnpackTrace() = default;
};

// For runs nobody times.
class NoTrace final : public UnpackTrace {
 public:
  void phase(const char*, uint64_t) override {}
};

// `free` is usable RAM minus the loader's live data; the image itself is still inside it.
StubStatus unpack_kernel(const UnpackRequest& request, const FreeMemory& free, PhysicalMemory& memory,
                         UnpackTrace& trace, UnpackResult* result);

}  // namespace kpack
