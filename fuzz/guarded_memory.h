// Physical memory for fuzz_unpack, fast enough to rebuild for every input: one mapping for the
// whole process, filled with a canary and kept read-only except the pages of ranges the engine was
// granted. A write anywhere else faults at once (ASan reports the SEGV with the writer's stack);
// a write beyond a granted range but on one of its pages is found by clean(), which compares only
// those pages. Between runs only the pages the last run touched are restored.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "packer/read/mapped_ram.h"
#include "stub/base/physical_memory.h"
#include "stub/base/range.h"
#include "tests/support/write_log.h"

namespace kpack::fuzz {

class GuardedMemory final : public PhysicalMemory {
 public:
  static constexpr uint8_t kCanary = 0xA5;
  static constexpr uint64_t kPage = 4096;

  GuardedMemory(uint64_t base, uint64_t capacity) : base_(base), capacity_(capacity), mapping_(capacity) {
    FUZZ_REQUIRE(mapping_.ok());
    bytes_ = mapping_.data();
    std::memset(bytes_, kCanary, capacity);
    FUZZ_REQUIRE(mprotect(bytes_, capacity_, PROT_READ) == 0);
    writable_page_.assign(capacity / kPage, false);
  }

  // A new machine of `size` bytes from `base`: every page the last run touched holds the canary
  // again, and all of it is read-only. Only those pages change protection, in runs of neighbours:
  // one mprotect over the whole mapping cost 80 % of an input's time (the kernel walks every page
  // table entry of the range, then shoots down the TLB).
  void start(uint64_t size) {
    FUZZ_REQUIRE(size <= capacity_ && size % kPage == 0);
    std::vector<Range> dirty = page_runs(dirty_pages_);  // still writable
    for (Range run : dirty) std::memset(at(run.begin), kCanary, run.size());
    for (const Loaded& l : loaded_) {
      Range pages = page_range(l.range.begin, l.range.size());
      set_protection(pages, PROT_READ | PROT_WRITE);
      std::memset(at(l.range.begin), kCanary, l.range.size());
      set_protection(pages, PROT_READ);
    }
    for (Range run : dirty) set_protection(run, PROT_READ);
    for (uint64_t page : dirty_pages_) writable_page_[page] = false;
    dirty_pages_.clear();
    loaded_.clear();
    log_.clear();
    size_ = size;
  }

  // Setup: bytes in memory that do not count as the engine's writes.
  void load(uint64_t addr, std::span<const uint8_t> data) {
    FUZZ_REQUIRE(inside(addr, data.size()));
    Range pages = page_range(addr, data.size());
    set_protection(pages, PROT_READ | PROT_WRITE);
    std::memcpy(at(addr), data.data(), data.size());
    set_protection(pages, PROT_READ);
    loaded_.push_back(Loaded{range_of(addr, data.size()), std::vector<uint8_t>(data.begin(), data.end())});
  }
  // Ranges the engine must never be granted (the stub, boot_params, the initrd, ...).
  void protect(Range r) { log_.protect(r); }

  const uint8_t* readable(uint64_t addr, uint64_t size) override { return inside(addr, size) ? at(addr) : nullptr; }

  uint8_t* writable(uint64_t addr, uint64_t size) override {
    if (!log_.request(addr, size, inside(addr, size))) return nullptr;
    if (size) {
      Range pages = page_range(addr, size);
      bool newly_writable = false;
      for (uint64_t a = pages.begin; a < pages.end; a += kPage) {
        uint64_t page = (a - base_) / kPage;
        if (!writable_page_[page]) {
          dirty_pages_.push_back(page);
          newly_writable = true;
        }
        writable_page_[page] = true;
      }
      if (newly_writable) set_protection(pages, PROT_READ | PROT_WRITE);
    }
    return at(addr);
  }

  // True when every byte of a writable page outside the granted ranges holds what it held before
  // the run (the canary, or what load() put there). Read-only pages cannot have changed.
  bool clean() const {
    std::vector<Range> granted = log_.granted();
    std::sort(granted.begin(), granted.end(), [](Range a, Range b) { return a.begin < b.begin; });
    for (uint64_t page : dirty_pages_) {
      uint64_t begin = base_ + page * kPage, end = begin + kPage;
      for (uint64_t a = begin; a < end;) {
        auto covering =
            std::find_if(granted.begin(), granted.end(), [&](Range g) { return g.begin <= a && a < g.end; });
        if (covering != granted.end()) {
          a = covering->end;
          continue;
        }
        auto next = std::find_if(granted.begin(), granted.end(), [&](Range g) { return g.begin > a; });
        uint64_t stop = std::min(end, next == granted.end() ? end : next->begin);
        if (!unchanged(a, stop)) return false;
        a = stop;
      }
    }
    return true;
  }

  // The same verdict from every byte of the machine (slow; KPACK_FUZZ_CROSSCHECK=1).
  bool clean_by_full_scan() const {
    for (uint64_t a = base_; a < base_ + size_; ++a) {
      bool granted = false;
      for (Range g : log_.granted()) granted |= g.begin <= a && a < g.end;
      if (!granted && !unchanged(a, a + 1)) return false;
    }
    return true;
  }

  uint8_t* at(uint64_t addr) const { return bytes_ + (addr - base_); }
  const std::vector<std::string>& violations() const { return log_.violations(); }
  const std::vector<Range>& granted() const { return log_.granted(); }

 private:
  bool inside(uint64_t addr, uint64_t size) const {
    return addr >= base_ && addr - base_ <= size_ && size <= size_ - (addr - base_);
  }
  Range page_range(uint64_t addr, uint64_t size) const {
    return Range{base_ + align_down(addr - base_, kPage), base_ + align_up(addr - base_ + size, kPage)};
  }
  void set_protection(Range pages, int protection) {
    FUZZ_REQUIRE(mprotect(at(pages.begin), pages.size(), protection) == 0);
  }
  // The pages as address ranges, neighbours merged, so each run costs one system call.
  std::vector<Range> page_runs(std::vector<uint64_t> pages) const {
    std::sort(pages.begin(), pages.end());
    std::vector<Range> runs;
    for (uint64_t page : pages) {
      uint64_t begin = base_ + page * kPage;
      if (!runs.empty() && runs.back().end == begin)
        runs.back().end += kPage;
      else
        runs.push_back(Range{begin, begin + kPage});
    }
    return runs;
  }
  // [begin, end) holds the canary, or the loaded bytes where load() put some.
  bool unchanged(uint64_t begin, uint64_t end) const {
    for (uint64_t a = begin; a < end; ++a) {
      uint8_t expected = kCanary;
      for (const Loaded& l : loaded_)
        if (a >= l.range.begin && a < l.range.end) expected = l.bytes[a - l.range.begin];
      if (*at(a) != expected) return false;
    }
    return true;
  }

  uint64_t base_;
  uint64_t capacity_;
  uint64_t size_ = 0;
  MappedRam mapping_;  // its pages' protection is this class's business
  uint8_t* bytes_ = nullptr;
  std::vector<bool> writable_page_;
  std::vector<uint64_t> dirty_pages_;
  struct Loaded {
    Range range;
    std::vector<uint8_t> bytes;
  };
  std::vector<Loaded> loaded_;  // the payload and the frame table
  test::WriteLog log_;
};

}  // namespace kpack::fuzz
