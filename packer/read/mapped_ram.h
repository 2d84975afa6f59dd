// Memory standing for a machine's RAM when the engine runs on the host (kpack info's placement
// report, benchmarks, fuzzers): one anonymous mapping, so that only the pages the engine touches cost
// host memory and no allocator fills or poisons the rest.
#pragma once

#include <sys/mman.h>

#include <cstdint>

namespace kpack {

class MappedRam {
 public:
  // Empty (ok() false) when the host cannot map `size` bytes.
  explicit MappedRam(uint64_t size) : size_(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    bytes_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }
  ~MappedRam() {
    if (bytes_) munmap(bytes_, size_);
  }
  MappedRam(const MappedRam&) = delete;
  MappedRam& operator=(const MappedRam&) = delete;

  bool ok() const { return bytes_ != nullptr; }
  uint64_t size() const { return size_; }
  uint8_t* data() const { return bytes_; }

  // The bytes of [offset, offset + size), or nullptr when they do not all lie inside (overflow-safe).
  uint8_t* at(uint64_t offset, uint64_t size) const {
    return offset <= size_ && size <= size_ - offset ? bytes_ + offset : nullptr;
  }

 private:
  uint64_t size_;
  uint8_t* bytes_ = nullptr;
};

}  // namespace kpack
