// "Physical memory" for the host build of the unpack engine: a buffer standing for RAM at
// [base, base + size), filled with a canary. Every range the engine asks to write is recorded and
// checked against the ranges it must never touch; after a run, every byte that differs from the
// canary must lie inside a range the engine asked for — so a decoder writing past what it was
// given is caught too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stub/base/physical_memory.h"
#include "stub/base/range.h"
#include "tests/support/write_log.h"

namespace kpack::test {

class SimulatedMemory final : public PhysicalMemory {
 public:
  static constexpr uint8_t kCanary = 0xA5;

  SimulatedMemory(uint64_t base, uint64_t size) : base_(base), bytes_(size, kCanary) {}

  const uint8_t* readable(uint64_t addr, uint64_t size) override {
    return inside(addr, size) ? &bytes_[addr - base_] : nullptr;
  }

  uint8_t* writable(uint64_t addr, uint64_t size) override {
    return log_.request(addr, size, inside(addr, size)) ? &bytes_[addr - base_] : nullptr;
  }

  // Where placement must keep below, as the stub's page-table pool says (PhysicalMemory).
  uint64_t reachable_below(uint64_t) const override { return reachable_below_; }
  void set_reachable_below(uint64_t limit) { reachable_below_ = limit; }

  // A fresh machine again, in the same buffer: a fuzzer that keeps one pays no page faults per run
  // (a new buffer's pages are the bulk of a run on a virtual machine).
  void reset() {
    std::fill(bytes_.begin(), bytes_.end(), kCanary);
    log_.clear();
    loaded_.clear();
    reachable_below_ = ~0ull;
  }

  // Setup: put bytes in memory without counting them as the engine's writes.
  void load(uint64_t addr, const std::vector<uint8_t>& data) {
    std::memcpy(&bytes_[addr - base_], data.data(), data.size());
    loaded_.push_back(range_of(addr, data.size()));
  }
  // Ranges the engine must never be granted (the stub, boot_params, the initrd, ...).
  void protect(Range r) { log_.protect(r); }

  uint8_t* at(uint64_t addr) { return &bytes_[addr - base_]; }
  std::vector<uint8_t> copy(uint64_t addr, uint64_t size) const {
    return std::vector<uint8_t>(bytes_.begin() + (addr - base_), bytes_.begin() + (addr - base_ + size));
  }
  const std::vector<Range>& granted() const { return log_.granted(); }
  const std::vector<std::string>& violations() const { return log_.violations(); }

  // Addresses whose byte changed from the canary (or from what load() put there) outside every
  // granted range; empty when the engine stayed inside what it asked for.
  std::vector<uint64_t> stray_writes(const std::vector<std::vector<uint8_t>>& loaded_contents) const {
    std::vector<uint64_t> stray;
    std::vector<uint8_t> expected(bytes_.size(), kCanary);
    for (size_t i = 0; i < loaded_.size() && i < loaded_contents.size(); ++i)
      std::memcpy(&expected[loaded_[i].begin - base_], loaded_contents[i].data(), loaded_contents[i].size());
    for (uint64_t i = 0; i < bytes_.size(); ++i) {
      if (bytes_[i] == expected[i]) continue;
      uint64_t addr = base_ + i;
      bool ok = false;
      for (Range r : log_.granted()) ok |= addr >= r.begin && addr < r.end;
      if (!ok) stray.push_back(addr);
      if (stray.size() > 16) break;
    }
    return stray;
  }

 private:
  bool inside(uint64_t addr, uint64_t size) const {
    return addr >= base_ && addr - base_ <= bytes_.size() && size <= bytes_.size() - (addr - base_);
  }

  uint64_t base_;
  uint64_t reachable_below_ = ~0ull;
  std::vector<uint8_t> bytes_;
  WriteLog log_;
  std::vector<Range> loaded_;
};

}  // namespace kpack::test
