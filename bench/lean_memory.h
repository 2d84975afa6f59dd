// "Physical memory" for benchmarks: one anonymous mapping standing for RAM at [0, size), with none of
// SimulatedMemory's canary and write bookkeeping, so that timing the engine times the engine.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "stub/engine/physical_memory.h"

namespace kpack::bench {

class LeanMemory final : public PhysicalMemory {
 public:
  explicit LeanMemory(uint64_t size) : size_(size) {
    // Untouched pages cost nothing, so RAM can be as large as a small VM's.
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    bytes_ = static_cast<uint8_t*>(p);
  }
  ~LeanMemory() { munmap(bytes_, size_); }
  LeanMemory(const LeanMemory&) = delete;
  LeanMemory& operator=(const LeanMemory&) = delete;

  const uint8_t* readable(uint64_t addr, uint64_t size) override { return at(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override { return at(addr, size); }
  uint64_t size() const { return size_; }

 private:
  uint8_t* at(uint64_t addr, uint64_t size) {
    return addr <= size_ && size <= size_ - addr ? bytes_ + addr : nullptr;
  }

  uint8_t* bytes_ = nullptr;
  uint64_t size_;
};

}  // namespace kpack::bench
