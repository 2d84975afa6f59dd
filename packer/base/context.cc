#include "packer/base/context.h"

#include <cstdio>

namespace kpack {

void PhaseTimes::end(const char* phase) {
  auto now = std::chrono::steady_clock::now();
  char part[96];
  std::snprintf(part, sizeof(part), "%s%s %.3f s", line_.empty() ? "time: " : ", ", phase,
                std::chrono::duration<double>(now - last_).count());
  line_ += part;
  last_ = now;
}

}  // namespace kpack
