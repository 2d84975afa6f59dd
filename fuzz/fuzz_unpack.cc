// fuzz_unpack: the stub's unpack engine on arbitrary payloads, for every codec, in a simulated
// machine whose memory records every write. Whatever the payload, the engine must write only
// memory it was given (never the image, boot_params or the initrd, never outside RAM); when it
// succeeds, the kernel must sit in free memory, aligned, with its entry inside it, and hold
// exactly the segments the payload describes. With KASLR, the kernel must also sit in a slot at or
// above the floor, its virtual offset in the 1 GiB window, and undoing the offset with the same
// table must give back exactly the payload's segments.
//
// Input: [codec] [machine] [frames] frame table... payload... [table size]
//   codec    bits 0-1: raw, gzip, lz4, zstd, or with bit 4 set xz; bit 2 a random physical slot;
//            bit 3 a random virtual offset with the relocation table, whose byte size is then the
//            input's last 4 bytes (little-endian; not part of the payload); the draws come from a
//            hash of the input; bit 5 keeps the table's digests as they are (without it, each lz4
//            or zstd frame's digest is set to its bytes' XXH3, so a mutated frame reaches the
//            decoder instead of being refused by its digest before it)
//   machine  bits 0-1 RAM size; bit 2 payload position; bits 3-4 lowest kernel address;
//            bit 5 an initrd; bit 6 a reserved hole in RAM; bit 7 two helper threads decode
//            frames alongside (the parallel path: the queue, per-frame verification)
//   frames   how many FrameEntry records follow (compressed codecs; loaded right before the payload)
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "packer/codecs/codecs.h"
#include "formats/call_targets.h"
#include "formats/le.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/guarded_memory.h"
#include "fuzz/self_test.h"
#include "stub/unpack/relocation_table.h"
#include "tests/support/thread_workers.h"
#include "stub/unpack/unpack.h"
#include "stub/unpack/xxh3.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;
using kpack::fuzz::GuardedMemory;

namespace {

constexpr uint64_t kRamBase = 0x100000;  // the image loads here, as QEMU and most loaders put it
constexpr uint64_t kMiB = 1 << 20;

struct Machine {
  uint64_t ram_size;
  uint64_t payload_addr;
  uint64_t min_kernel_address;
  Range boot_params;
  Range initrd;
  Range hole;
};

Machine machine_from(uint8_t bits) {
  static constexpr uint64_t kRamSizes[] = {5 * kMiB, 8 * kMiB, 12 * kMiB, 20 * kMiB};
  static constexpr uint64_t kKernelAddresses[] = {0x200000, 0x400000, 0x800000, 0x100000};
  Machine m;
  m.ram_size = kRamSizes[bits & 3];
  // Right after a one-page stub (where compressed payloads go), or where a raw payload's first
  // segment can be 2 MiB-aligned in place (packed with its headers one page before it).
  m.payload_addr = bits & 4 ? 0x200000 - 0x1000 : kRamBase + 0x1000;
  m.min_kernel_address = kKernelAddresses[(bits >> 3) & 3];
  uint64_t top = kRamBase + m.ram_size;
  m.boot_params = Range{top - 0x10000, top - 0xF000};
  if (bits & 0x20) m.initrd = range_of(align_down(kRamBase + m.ram_size / 2, 4096), kMiB);
  if (bits & 0x40) m.hole = Range{5 * kMiB, 6 * kMiB};
  return m;
}

StreamFormat stream_format_of(Codec codec) {
  switch (codec) {
    case Codec::kGzip: return StreamFormat::kGzip;
    case Codec::kLz4: return StreamFormat::kLz4Frame;
    case Codec::kZstd: return StreamFormat::kZstd;
    case Codec::kXz: return StreamFormat::kXz;
    case Codec::kRaw: break;
  }
  return StreamFormat::kRaw;
}

// The ELF file (then the relocation table) the payload holds, each frame decoded on its own by
// the host's independent stream reader, its coding undone, and put where the frame table says. A frame the host
// cannot decode to its size stays zeros: the engine skips frames of bytes between segments, so a
// corrupt one there is no error; anywhere else the comparison below catches it. Empty when the
// table describes more than the fuzzer's memory could hold.
std::vector<uint8_t> host_decoded(Codec codec, const std::vector<uint8_t>& payload,
                                  const std::vector<FrameEntry>& frames) {
  if (codec == Codec::kRaw) return payload;
  std::vector<uint8_t> elf;
  for (const FrameEntry& f : frames) {
    uint64_t at = f.file_offset, size = f.size, from = f.payload_offset, packed = f.payload_size;
    if (at > 64 * kMiB || size > 64 * kMiB || from > payload.size() || packed > payload.size() - from) return {};
    if (elf.size() < at + size) elf.resize(at + size);
    Result<std::vector<uint8_t>> decoded =
        decode_stream(stream_format_of(codec), {std::span(payload).subspan(from, packed), "fuzz"}, size);
    if (!decoded || decoded->size() != size) continue;
    undo_frame_coding(f, decoded->data());
    std::copy(decoded->begin(), decoded->end(), elf.begin() + at);
  }
  return elf;
}

void check_success(const UnpackRequest& request, const FreeMemory& free, const UnpackResult& r, GuardedMemory& memory,
                   const std::vector<uint8_t>& payload, const std::vector<FrameEntry>& frames) {
  const KernelHeaders& k = r.kernel;
  Range kernel = range_of(r.base, k.span());
  FUZZ_CHECK(!kernel.empty() && free.contains(kernel));
  FUZZ_CHECK(r.base % k.alignment == 0 && r.base >= request.min_kernel_address);
  FUZZ_CHECK(r.entry >= kernel.begin && r.entry < kernel.end);
  FUZZ_CHECK(free.contains(r.work) && !r.work.overlaps(kernel) && !r.work.overlaps(request.image));
  if (request.codec != Codec::kRaw) FUZZ_CHECK(!kernel.overlaps(request.image));

  if (request.kaslr.physical && !r.physical_fallback) FUZZ_CHECK(r.physical_slots > 0);
  FUZZ_CHECK(r.virtual_offset % (2 * kMiB) == 0);
  FUZZ_CHECK(k.physical.begin + r.virtual_offset + k.span() <= kKernelImageSize || r.virtual_offset == 0);

  std::vector<uint8_t> elf = host_decoded(request.codec, payload, frames);
  if (elf.empty()) return;
  if (r.virtual_offset) {
    // The table is the decoded stream's tail; applying it again with the opposite offset must
    // restore every byte the engine patched.
    FUZZ_CHECK(elf.size() >= request.relocations_size);
    const uint8_t* table = elf.data() + elf.size() - request.relocations_size;
    RelocationTable undone;
    FUZZ_CHECK(relocate_kernel(table, request.relocations_size, k, r.base, 0 - r.virtual_offset, memory, &undone).ok());
  }
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t at = r.base + (s.paddr - k.physical.begin);
    FUZZ_CHECK(s.offset + s.filesz <= elf.size());
    const uint8_t* placed = memory.at(at);
    FUZZ_CHECK(std::equal(placed, placed + s.filesz, elf.begin() + s.offset));
    for (uint64_t b = s.filesz; b < s.memsz; ++b) FUZZ_CHECK(placed[b] == 0);
  }
}

// Each frame's digest set to the XXH3 of the bytes it names, where they lie in the payload.
void prove_frames(Codec codec, std::vector<uint8_t>& table, const std::vector<uint8_t>& payload) {
  if (digest_for(codec) != FrameDigest::kXxh3) return;
  static const Xxh3Function xxh3 = xxh3_for_this_cpu();  // CPUID once, not per frame (xxh3.h)
  for (size_t at = 0; at + sizeof(FrameEntry) <= table.size(); at += sizeof(FrameEntry)) {
    FrameEntry f;
    std::memcpy(&f, table.data() + at, sizeof f);
    uint64_t offset = f.payload_offset, packed = f.payload_size;
    if (offset > payload.size() || packed > payload.size() - offset) continue;
    f.digest = xxh3(payload.data() + offset, packed);
    std::memcpy(table.data() + at, &f, sizeof f);
  }
}

// What the simulated machine saw: no write outside what the engine was given, and every guarded
// page back to its canary (the page-wise check confirmed by a full scan when `crosscheck`).
void check_memory(const std::vector<std::string>& violations, bool clean, bool crosscheck, bool clean_by_full_scan) {
  for (const std::string& v : violations) std::fprintf(stderr, "violation: %s\n", v.c_str());
  FUZZ_CHECK(violations.empty());
  if (crosscheck) FUZZ_CHECK(clean == clean_by_full_scan);
  FUZZ_CHECK(clean);
}

// A refusal says why.
void check_refused(const StubStatus& status) { FUZZ_CHECK(status.message && status.message[0]); }

// One input run through the engine: the request, the machine's free memory, and what came back.
struct Run {
  UnpackRequest request;
  FreeMemory free;
  std::vector<uint8_t> payload;
  std::vector<FrameEntry> frames;
  StubStatus status;
  UnpackResult result;
};

// One machine for the whole process, restored between runs: building a fresh one per input
// cost more than the engine itself.
GuardedMemory& machine_memory() {
  static GuardedMemory memory(kRamBase, 20 * kMiB);
  return memory;
}

// Sets up the machine the input describes and runs the engine on it; nothing when the input
// describes no run (fuzz/fuzz_unpack.cc's header says how it is read).
std::optional<Run> run_input(const uint8_t* data, size_t size, kpack::test::ThreadWorkers& workers) {
  if (size < 4) return std::nullopt;
  Run run;
  UnpackRequest& request = run.request;
  uint32_t codec = (data[0] & 3) | (data[0] >> 2 & 4);
  if (codec >= kCodecCount) return std::nullopt;
  request.codec = static_cast<Codec>(codec);
  Machine m = machine_from(data[1]);
  bool virtual_base = data[0] & 8;
  uint32_t frames = data[2];
  size_t table_bytes = size_t{frames} * sizeof(FrameEntry);
  if (size < 3 + table_bytes + (virtual_base ? 4 : 0) + 1) return std::nullopt;
  if (table_bytes > m.payload_addr - kRamBase) return std::nullopt;
  std::vector<uint8_t> table(data + 3, data + 3 + table_bytes);
  run.payload.assign(data + 3 + table_bytes, data + size - (virtual_base ? 4 : 0));
  const std::vector<uint8_t>& payload = run.payload;
  if (!(data[0] & 0x20)) prove_frames(static_cast<Codec>(codec), table, payload);
  request.kaslr.physical = data[0] & 4;
  request.kaslr.virtual_base = virtual_base;
  if (virtual_base) request.relocations_size = load_le<uint32_t>(data + size - 4) & 0xFFFFC;
  if (request.codec == Codec::kRaw && request.relocations_size > payload.size()) return std::nullopt;
  uint64_t draw = mix_entropy(0, data, size);
  request.kaslr.physical_random = mix_entropy(draw, 1);
  request.kaslr.virtual_random = mix_entropy(draw, 2);
  request.payload_addr = m.payload_addr;
  request.payload_size = payload.size();
  request.image = Range{kRamBase, m.payload_addr + payload.size()};
  request.min_kernel_address = m.min_kernel_address;
  request.frame_table_addr = m.payload_addr - table_bytes;
  request.frame_count = frames;
  request.digest = digest_for(request.codec);
  if (request.image.end > m.boot_params.begin - kMiB) return std::nullopt;

  GuardedMemory& memory = machine_memory();
  memory.start(m.ram_size);
  memory.load(m.payload_addr, payload);
  if (!table.empty()) memory.load(request.frame_table_addr, table);
  // A raw payload's segments may be overwritten (moved onto themselves); what precedes the first
  // segment (the stub and, at least, the ELF header) may not. Compressed images stay intact.
  uint64_t kept = request.codec == Codec::kRaw ? std::min<uint64_t>(payload.size(), 64) : payload.size();
  memory.protect(Range{kRamBase, m.payload_addr + kept});
  memory.protect(m.boot_params);
  if (!m.initrd.empty()) memory.protect(m.initrd);

  FUZZ_REQUIRE(run.free.add(Range{kRamBase, kRamBase + m.ram_size}).ok());
  FUZZ_REQUIRE(run.free.remove(m.boot_params).ok() && run.free.remove(m.initrd).ok() && run.free.remove(m.hole).ok());

  if (data[1] & 0x80) request.workers = &workers, request.max_workers = 2;
  NoTrace trace;
  run.status = unpack_kernel(request, run.free, memory, trace, &run.result);
  run.frames.resize(frames);
  if (frames) std::memcpy(run.frames.data(), table.data(), table.size());
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kpack::test::ThreadWorkers workers;
  std::optional<Run> run = run_input(data, size, workers);
  if (!run) return 0;
  GuardedMemory& memory = machine_memory();
  // KPACK_FUZZ_CROSSCHECK=1 confirms the page-wise check against a scan of every byte (slowly).
  static const bool crosscheck = std::getenv("KPACK_FUZZ_CROSSCHECK") != nullptr;
  bool clean = memory.clean();
  check_memory(memory.violations(), clean, crosscheck, crosscheck ? memory.clean_by_full_scan() : clean);
  if (run->status.ok())
    check_success(run->request, run->free, run->result, memory, run->payload, run->frames);
  else
    check_refused(run->status);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above: the engine unpacks a raw synthetic kernel on the fuzzer's
// machine, then the checks get its result, request or payload spoiled.
namespace {

std::vector<uint8_t> raw_input() {
  std::vector<uint8_t> elf = test::make_kernel_elf({{0x1000000, 0x3000, 0x5000}, {0x1200000, 0x2000, 0x2000}});
  std::vector<uint8_t> input = {0x00, 0x03 | 0x08, 0x00};  // raw; 20 MiB of RAM, kernel from 4 MiB; no frames
  input.insert(input.end(), elf.begin(), elf.end());
  return input;
}

void spoil_success(const std::function<void(Run&)>& spoil) {
  std::vector<uint8_t> input = raw_input();
  kpack::test::ThreadWorkers workers;
  std::optional<Run> run = run_input(input.data(), input.size(), workers);
  FUZZ_REQUIRE(run && run->status.ok());
  spoil(*run);
  check_success(run->request, run->free, run->result, machine_memory(), run->payload, run->frames);
}

}  // namespace

FUZZ_SPOIL("writes outside what the engine was given") { check_memory({"a write at 0x1000"}, true, false, true); }
FUZZ_SPOIL("a page check that disagrees with the full scan") { check_memory({}, true, true, false); }
FUZZ_SPOIL("a guarded page left changed") { check_memory({}, false, false, false); }
FUZZ_SPOIL("a refusal without a reason") { check_refused(StubStatus{""}); }
FUZZ_SPOIL("a kernel outside free memory") {
  spoil_success([](Run& run) { run.free = FreeMemory{}; });
}
FUZZ_SPOIL("a kernel below the lowest address allowed") {
  spoil_success([](Run& run) { run.request.min_kernel_address = run.result.base + 1; });
}
FUZZ_SPOIL("an entry past the kernel") {
  spoil_success([](Run& run) { run.result.entry = run.result.base + run.result.kernel.span(); });
}
FUZZ_SPOIL("a work area over the kernel") {
  spoil_success([](Run& run) { run.result.work = range_of(run.result.base, 4096); });
}
FUZZ_SPOIL("a decoded kernel over the image") {
  spoil_success([](Run& run) {
    run.request.codec = Codec::kLz4;
    run.request.image = range_of(run.result.base, 4096);
  });
}
FUZZ_SPOIL("a random physical slot drawn from none") {
  spoil_success([](Run& run) {
    run.request.kaslr.physical = true;
    run.result.physical_fallback = false;
    run.result.physical_slots = 0;
  });
}
FUZZ_SPOIL("a virtual offset off 2 MiB") {
  spoil_success([](Run& run) { run.result.virtual_offset = 4096; });
}
FUZZ_SPOIL("a virtual offset past the kernel's 1 GiB window") {
  spoil_success([](Run& run) { run.result.virtual_offset = kKernelImageSize; });
}
FUZZ_SPOIL("a relocation table longer than the payload") {
  spoil_success([](Run& run) {
    run.result.virtual_offset = 2 * kMiB;
    run.request.relocations_size = run.payload.size() + 4;
  });
}
FUZZ_SPOIL("a relocation table that does not undo") {
  spoil_success([](Run& run) {
    run.result.virtual_offset = 2 * kMiB;
    run.request.relocations_size = 4;
    run.payload.back() = 0xFF;  // a table of one word that is not its leading zero
  });
}
FUZZ_SPOIL("a segment past the payload") {
  spoil_success([](Run& run) { run.result.kernel.segments[0].offset = run.payload.size(); });
}
FUZZ_SPOIL("a segment placed with other bytes") {
  spoil_success([](Run& run) {
    const LoadSegment& s = run.result.kernel.segments[0];
    run.payload[s.offset + s.filesz - 1] ^= 1;
  });
}
FUZZ_SPOIL("a bss that is not zero") {
  spoil_success([](Run& run) { run.result.kernel.segments[0].filesz = 0; });
}
#endif
