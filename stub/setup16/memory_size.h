// The memory probes' decisions, as the kernel's setup makes them (arch/x86/boot/memory.c): which
// E820 replies make the map, and what E801's registers say. No BIOS call in here: the replies come
// in as values, so the host tests the rules on recorded BIOS answers (tests/unit/stub/setup16/memory_size.cc)
// and memory16.cc does the asking. The kernel, not the setup, falls back on E801 and AH=88h when
// the map has fewer than two entries; the setup asks all three.
#pragma once

#include <stdint.h>

#include "formats/boot_params.h"

namespace kpack::setup16 {

inline constexpr uint32_t kSmap = 0x534D4150;  // "SMAP"

// What an INT 15h service returned, as far as the probes look.
struct BiosReply {
  uint32_t eax, ebx, ecx, edx;
  bool carry;
};

// The E820 map: `ask(continuation, entry)` asks for the entry after `continuation` (0: the first)
// into `entry` and returns the reply. The number of entries that stand.
template <typename Ask>
uint32_t read_e820_map(boot::E820Entry* table, Ask&& ask) {
  uint32_t count = 0, continuation = 0;
  do {
    BiosReply reply = ask(continuation, &table[count]);
    // A BIOS may end the list with CF set and no signature: what came before stands.
    if (reply.carry) break;
    // A BIOS that stops answering "SMAP" mid-list may have returned anything: keep no entry.
    if (reply.eax != kSmap) return 0;
    ++count;
    continuation = reply.ebx;
  } while (continuation && count < boot::kE820MaxEntries);
  return count;
}

// boot_params.alt_mem_k (KiB above 1 MiB) from an E801 reply; false when it says nothing usable.
inline bool e801_memory_k(const BiosReply& reply, uint32_t* alt_mem_k) {
  if (reply.carry) return false;
  uint16_t ax = static_cast<uint16_t>(reply.eax), cx = static_cast<uint16_t>(reply.ecx),
           dx = static_cast<uint16_t>(reply.edx);
  // AX and CX (KiB between 1 and 16 MiB) are meant to agree; some BIOSes fill only one.
  uint16_t below_16m_k = cx || dx ? cx : ax;
  if (below_16m_k > 15 * 1024) return false;  // bogus
  // With no hole below 16 MiB, DX adds the 64 KiB blocks above it (the kernel's formula).
  *alt_mem_k = below_16m_k == 15 * 1024 ? (static_cast<uint32_t>(dx) << 6) + below_16m_k : below_16m_k;
  return true;
}

}  // namespace kpack::setup16
