// Decoding frames on several CPUs at once. The engine hands out frames from one queue; whoever
// runs the engine (the stub with its application processors, the host with threads) lends it
// workers through this interface. Every worker has its own decoder and codec state; a frame's
// destination follows from the frame table alone, so workers share nothing but the queue.
#pragma once

#include <stdint.h>

#include "stub/base/range.h"

namespace kpack {

inline constexpr uint32_t kMaxFrameWorkers = 8;  // besides the caller

class FrameWorkers {
 public:
  // Memory `count` workers need for themselves (the stub's: stacks), which the engine then gives
  // start() from its work area.
  virtual uint64_t memory_for(uint32_t count) const = 0;
  // Starts up to `count` workers, each running work(arg, index) once with index 1..count, on
  // `memory` (memory_for(count) bytes, 4 KiB-aligned, below 4 GiB); returns how many may run
  // it (indices 1..that). It need not wait for them: a worker joins the queue when it arrives, or
  // never, and one arriving after the last item finds nothing to do.
  virtual uint32_t start(void (*work)(void* arg, uint32_t index), void* arg, uint32_t count, Range memory) = 0;
  // Returns once no worker runs any more: each has returned from `work`, or has been stopped (a
  // CPU that overran a bounded wait) wherever it was; the engine redoes what those left undone.
  virtual void finish() = 0;
  // Called on every CPU that decodes before its first item, index 0 on the caller's, with the
  // kernel's destination, which other CPUs may be writing already, and the most memory one item
  // touches (the largest frame, its compressed bytes and a codec arena): the stub touches the
  // destination with writes that change nothing, to size QEMU's software TLB for that much
  // (stub/arch/emulated_tlb.h).
  virtual void before_decoding(uint32_t /*index*/, uint8_t* /*ram*/, uint64_t /*size*/, uint64_t /*working_set*/) {}

  // For tests of the engine's redo: whether worker `index` is to stop inside its first item, with
  // the item's bytes half written (scrambled), as a CPU stopped by the bounded wait would leave
  // them. hold() then keeps it there until finish() stops it (a CPU never returns: INIT stops it;
  // a thread returns, and the engine ends its work without marking the item done).
  virtual bool holds(uint32_t /*index*/) const { return false; }
  virtual void hold(uint32_t /*index*/) {}

 protected:
  ~FrameWorkers() = default;
};

}  // namespace kpack
