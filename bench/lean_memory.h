// "Physical memory" for benchmarks: one anonymous mapping standing for RAM at [0, size), with none of
// SimulatedMemory's canary and write bookkeeping, so that timing the engine times the engine.
#pragma once

#include <cstdint>
#include <new>

#include "packer/read/mapped_ram.h"
#include "stub/base/physical_memory.h"

namespace kpack::bench {

class LeanMemory final : public PhysicalMemory {
 public:
  // Untouched pages cost nothing, so RAM can be as large as a small VM's.
  explicit LeanMemory(uint64_t size) : ram_(size) {
    if (!ram_.ok()) throw std::bad_alloc();
  }

  const uint8_t* readable(uint64_t addr, uint64_t size) override { return ram_.at(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override { return ram_.at(addr, size); }
  uint64_t size() const { return ram_.size(); }

 private:
  MappedRam ram_;
};

}  // namespace kpack::bench
