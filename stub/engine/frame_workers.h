// Decoding frames on several CPUs at once. The engine hands out frames from one queue; whoever
// runs the engine (the stub with its application processors, the host with threads) lends it
// workers through this interface. Every worker has its own decoder and codec state; a frame's
// destination follows from the frame table alone, so workers share nothing but the queue.
#pragma once

#include <stdint.h>

namespace kpack {

inline constexpr uint32_t kMaxFrameWorkers = 8;  // besides the caller

class FrameWorkers {
 public:
  // Starts up to `count` workers, each running work(arg, index) once with index 1..count; returns
  // how many started. Workers that did not start never run `work`.
  virtual uint32_t start(void (*work)(void* arg, uint32_t index), void* arg, uint32_t count) = 0;
  // Returns once every started worker has returned from `work`.
  virtual void finish() = 0;

 protected:
  ~FrameWorkers() = default;
};

}  // namespace kpack
