// The host's stand-in for the stub's application processors: frame workers as threads, so tests,
// the fuzzer and the benchmark run the engine's parallel decode exactly as the stub does.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "stub/unpack/frame_workers.h"

namespace kpack::test {

class ThreadWorkers final : public FrameWorkers {
 public:
  // `held`: the helper the engine's test hook holds inside its first item (0: none), released by
  // finish(), like a CPU the stub stops after its bounded wait. `first_alone`: the first helper
  // works through the queue before start() returns to the caller, so a test can prove that helpers
  // are handed work whatever the host's scheduler does.
  explicit ThreadWorkers(uint32_t held = 0, bool first_alone = false) : held_(held), first_alone_(first_alone) {}

  uint64_t memory_for(uint32_t) const override { return 0; }
  uint32_t start(void (*work)(void*, uint32_t), void* arg, uint32_t count, Range) override {
    for (uint32_t i = 1; i <= count; ++i) {
      threads_.emplace_back([this, work, arg, i] {
        work(arg, i);
        if (i == held_) held_returned_.store(true);
        if (i == 1) first_returned_.store(true);
      });
      if (i == 1 && first_alone_)
        while (!first_returned_.load()) std::this_thread::yield();
      // The held helper takes its item while nothing else runs: the first item, every time.
      if (i == held_)
        while (!holding_.load() && !held_returned_.load()) std::this_thread::yield();
    }
    return count;
  }
  void finish() override {
    released_.store(true);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  void before_decoding(uint32_t index, uint8_t* ram, uint64_t size, uint64_t working_set) override {
    std::lock_guard<std::mutex> lock(prepared_lock_);
    prepared_.push_back({index, ram, size, working_set});
  }
  bool holds(uint32_t index) const override { return index == held_; }

  // Each before_decoding call, in the order they came.
  struct Prepared {
    uint32_t index;
    const uint8_t* ram;
    uint64_t size;
    uint64_t working_set;
  };
  std::vector<Prepared> prepared() const {
    std::lock_guard<std::mutex> lock(prepared_lock_);
    return prepared_;
  }
  void hold(uint32_t) override {
    holding_.store(true);
    while (!released_.load()) std::this_thread::yield();
  }

 private:
  std::vector<std::thread> threads_;
  uint32_t held_;
  bool first_alone_;
  std::atomic<bool> holding_{false};
  std::atomic<bool> held_returned_{false};
  std::atomic<bool> first_returned_{false};
  std::atomic<bool> released_{false};
  mutable std::mutex prepared_lock_;
  std::vector<Prepared> prepared_;
};

}  // namespace kpack::test
