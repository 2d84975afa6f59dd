// What a simulated physical memory records of the engine's writes: every range it asked for, and
// every request outside RAM or over a range it must never touch (the stub, boot_params, ...).
// Shared by the tests' SimulatedMemory and the fuzzers' GuardedMemory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stub/base/range.h"

namespace kpack::test {

class WriteLog {
 public:
  void protect(Range r) { protected_.push_back(r); }

  // Records a request for [addr, addr + size); false (and a violation) when it is outside RAM.
  bool request(uint64_t addr, uint64_t size, bool inside_ram) {
    if (!inside_ram) {
      violations_.push_back("write outside RAM at " + std::to_string(addr));
      return false;
    }
    Range wanted = range_of(addr, size);
    for (Range r : protected_)
      if (r.overlaps(wanted)) violations_.push_back("write over a protected range at " + std::to_string(addr));
    granted_.push_back(wanted);
    return true;
  }

  void clear() {
    protected_.clear();
    granted_.clear();
    violations_.clear();
  }

  const std::vector<Range>& granted() const { return granted_; }
  const std::vector<std::string>& violations() const { return violations_; }

 private:
  std::vector<Range> protected_;
  std::vector<Range> granted_;
  std::vector<std::string> violations_;
};

}  // namespace kpack::test
