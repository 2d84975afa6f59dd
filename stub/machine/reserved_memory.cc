#include "stub/machine/reserved_memory.h"

namespace kpack {

StubStatus remove_reserved_memory(const KaslrOptions& options, FreeMemory& free) {
  const MemoryReservations& m = options.memory;
  if (m.overflow)
    return fail("more memmap= regions than the stub can keep clear of", m.reserved_count + m.exact_ram_count,
                kMaxReservedRanges);
  for (uint32_t i = 0; i < m.reserved_count; ++i) KPACK_TRY(free.remove(m.reserved[i]));
  KPACK_TRY(free.remove(Range{options.memory_limit, ~0ull}));
  if (!m.exactmap) return StubStatus::success();
  // Only the nn@ss ranges are the kernel's RAM: take out what lies between them.
  FreeMemory outside;
  KPACK_TRY(outside.add(Range{0, ~0ull}));
  for (uint32_t i = 0; i < m.exact_ram_count; ++i) KPACK_TRY(outside.remove(m.exact_ram[i]));
  for (uint32_t i = 0; i < outside.count(); ++i) KPACK_TRY(free.remove(outside.at(i)));
  return StubStatus::success();
}

StubStatus keep_command_line_memory(const KaslrOptions& options, BootEnvironment& env) {
  KPACK_TRY(remove_reserved_memory(options, env.free));
  env.command_line_memory = &options;
  return StubStatus::success();
}

}  // namespace kpack
