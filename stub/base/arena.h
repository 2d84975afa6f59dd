// A bump allocator over a fixed piece of memory: the codecs' state lives here. Nothing is freed
// one by one; the whole arena is dropped when the kernel starts.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace kpack {

class Arena {
 public:
  Arena() = default;
  Arena(uint8_t* begin, uint64_t size) : next_(begin), end_(begin + size) {}

  void* allocate(uint64_t size, uint64_t alignment = 16) {
    uintptr_t at = (reinterpret_cast<uintptr_t>(next_) + alignment - 1) & ~uintptr_t(alignment - 1);
    if (!next_ || at > reinterpret_cast<uintptr_t>(end_) || size > reinterpret_cast<uintptr_t>(end_) - at)
      return nullptr;
    next_ = reinterpret_cast<uint8_t*>(at + size);
    return reinterpret_cast<void*>(at);
  }

  // What allocate() can still hand out, and a way to drop everything allocated after a point:
  // the xz decoder's state lives for one frame.
  uint64_t available() const { return static_cast<uint64_t>(end_ - next_); }
  uint8_t* mark() const { return next_; }
  void release(uint8_t* mark) { next_ = mark; }

 private:
  uint8_t* next_ = nullptr;
  uint8_t* end_ = nullptr;
};

}  // namespace kpack
