// The 16-bit setup's memory probes (stub/setup16/memory_size.h) on recorded INT 15h replies.
#include <doctest/doctest.h>

#include <vector>

#include "stub/setup16/memory_size.h"

using namespace kpack;
using namespace kpack::setup16;

namespace {

struct RecordedE820 {
  std::vector<BiosReply> replies;
  std::vector<uint32_t> continuations;  // what each call was given in EBX
  BiosReply operator()(uint32_t continuation, boot::E820Entry* entry) {
    size_t call = continuations.size();
    continuations.push_back(continuation);
    entry->addr = call * 0x100000;
    entry->size = 0x1000;
    entry->type = boot::kE820Ram;
    return replies.at(call);
  }
};

BiosReply smap(uint32_t next) { return {kSmap, next, 20, kSmap, false}; }

}  // namespace

TEST_CASE("E820: entries until EBX is 0, each call given the last EBX") {
  boot::E820Entry table[boot::kE820MaxEntries] = {};
  RecordedE820 bios{{smap(1), smap(7), smap(0)}, {}};
  CHECK(read_e820_map(table, bios) == 3);
  CHECK(bios.continuations == std::vector<uint32_t>{0, 1, 7});
  CHECK(uint64_t{table[2].addr} == 0x200000);
}

TEST_CASE("E820: a carry ends the list keeping what came; a lost signature keeps nothing") {
  boot::E820Entry table[boot::kE820MaxEntries] = {};
  RecordedE820 carry{{smap(1), smap(2), {0x86, 0, 0, 0, true}}, {}};
  CHECK(read_e820_map(table, carry) == 2);
  RecordedE820 first_carry{{{0x8600, 0, 0, 0, true}}, {}};
  CHECK(read_e820_map(table, first_carry) == 0);
  RecordedE820 garbage{{smap(1), smap(2), {0x12345678, 3, 20, 0, false}}, {}};
  CHECK(read_e820_map(table, garbage) == 0);
  CHECK(garbage.continuations.size() == 3);
}

TEST_CASE("E820: no more than the zero page's 128 entries, even if the BIOS goes on") {
  boot::E820Entry table[boot::kE820MaxEntries] = {};
  RecordedE820 endless{std::vector<BiosReply>(200, smap(5)), {}};
  CHECK(read_e820_map(table, endless) == 128);
  CHECK(endless.continuations.size() == 128);
}

TEST_CASE("E801: CX or AX below 16 MiB, DX's 64 KiB blocks above it only without a hole") {
  uint32_t k = 0xDEAD;
  // QEMU with 512 MiB: 15 MiB below 16 MiB in AX and CX, (512 - 16) MiB in 64 KiB blocks in BX and DX.
  CHECK(e801_memory_k({0x3C00, 0x1F00, 0x3C00, 0x1F00, false}, &k));
  CHECK(k == 0x3C00 + (0x1F00u << 6));
  CHECK(k == 511 * 1024);
  // A BIOS that fills only AX and BX.
  CHECK(e801_memory_k({0x3C00, 0x1F00, 0, 0, false}, &k));
  CHECK(k == 15 * 1024);
  // A hole below 16 MiB: DX does not count.
  CHECK(e801_memory_k({0x1C00, 0, 0x1C00, 0x100, false}, &k));
  CHECK(k == 0x1C00);
  k = 0xDEAD;
  CHECK_FALSE(e801_memory_k({0x3C00, 0x1F00, 0x3C00, 0x1F00, true}, &k));  // unsupported
  CHECK_FALSE(e801_memory_k({0x3C01, 0, 0x3C01, 0, false}, &k));           // more than 15 MiB: bogus
  CHECK(k == 0xDEAD);
}
