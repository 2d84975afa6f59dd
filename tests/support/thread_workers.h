// The host's stand-in for the stub's application processors: frame workers as threads, so tests,
// the fuzzer and the benchmark run the engine's parallel decode exactly as the stub does.
#pragma once

#include <thread>
#include <vector>

#include "frame_workers.h"

namespace kpack::test {

class ThreadWorkers final : public FrameWorkers {
 public:
  uint64_t memory_for(uint32_t) const override { return 0; }
  uint32_t start(void (*work)(void*, uint32_t), void* arg, uint32_t count, Range) override {
    for (uint32_t i = 1; i <= count; ++i) threads_.emplace_back(work, arg, i);
    return count;
  }
  void finish() override {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace kpack::test
