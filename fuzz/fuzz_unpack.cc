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
#include <vector>

#include "packer/codecs/codecs.h"
#include "formats/le.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/guarded_memory.h"
#include "stub/unpack/relocation_table.h"
#include "tests/support/thread_workers.h"
#include "stub/unpack/unpack.h"
#include "stub/unpack/xxh3.h"

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
// the host's independent stream reader and put where the frame table says. A frame the host
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
    if (decoded && decoded->size() == size) std::copy(decoded->begin(), decoded->end(), elf.begin() + at);
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  UnpackRequest request;
  uint32_t codec = (data[0] & 3) | (data[0] >> 2 & 4);
  if (codec >= kCodecCount) return 0;
  request.codec = static_cast<Codec>(codec);
  Machine m = machine_from(data[1]);
  bool virtual_base = data[0] & 8;
  uint32_t frames = data[2];
  size_t table_bytes = size_t{frames} * sizeof(FrameEntry);
  if (size < 3 + table_bytes + (virtual_base ? 4 : 0) + 1) return 0;
  if (table_bytes > m.payload_addr - kRamBase) return 0;
  std::vector<uint8_t> table(data + 3, data + 3 + table_bytes);
  std::vector<uint8_t> payload(data + 3 + table_bytes, data + size - (virtual_base ? 4 : 0));
  if (!(data[0] & 0x20)) prove_frames(static_cast<Codec>(codec), table, payload);
  request.kaslr.physical = data[0] & 4;
  request.kaslr.virtual_base = virtual_base;
  if (virtual_base) request.relocations_size = load_le<uint32_t>(data + size - 4) & 0xFFFFC;
  if (request.codec == Codec::kRaw && request.relocations_size > payload.size()) return 0;
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
  if (request.image.end > m.boot_params.begin - kMiB) return 0;

  // One machine for the whole process, restored between runs: building a fresh one per input
  // cost more than the engine itself.
  static GuardedMemory memory(kRamBase, 20 * kMiB);
  memory.start(m.ram_size);
  memory.load(m.payload_addr, payload);
  if (!table.empty()) memory.load(request.frame_table_addr, table);
  // A raw payload's segments may be overwritten (moved onto themselves); what precedes the first
  // segment (the stub and, at least, the ELF header) may not. Compressed images stay intact.
  uint64_t kept = request.codec == Codec::kRaw ? std::min<uint64_t>(payload.size(), 64) : payload.size();
  memory.protect(Range{kRamBase, m.payload_addr + kept});
  memory.protect(m.boot_params);
  if (!m.initrd.empty()) memory.protect(m.initrd);

  FreeMemory free;
  FUZZ_CHECK(free.add(Range{kRamBase, kRamBase + m.ram_size}).ok());
  FUZZ_CHECK(free.remove(m.boot_params).ok() && free.remove(m.initrd).ok() && free.remove(m.hole).ok());

  kpack::test::ThreadWorkers workers;
  if (data[1] & 0x80) request.workers = &workers, request.max_workers = 2;
  NoTrace trace;
  UnpackResult result;
  StubStatus status = unpack_kernel(request, free, memory, trace, &result);
  for (const std::string& v : memory.violations()) std::fprintf(stderr, "violation: %s\n", v.c_str());
  FUZZ_CHECK(memory.violations().empty());
  bool clean = memory.clean();
  // KPACK_FUZZ_CROSSCHECK=1 confirms the page-wise check against a scan of every byte (slowly).
  static const bool crosscheck = std::getenv("KPACK_FUZZ_CROSSCHECK") != nullptr;
  if (crosscheck) FUZZ_CHECK(clean == memory.clean_by_full_scan());
  FUZZ_CHECK(clean);
  std::vector<FrameEntry> frame_list(frames);
  if (frames) std::memcpy(frame_list.data(), table.data(), table.size());
  if (status.ok())
    check_success(request, free, result, memory, payload, frame_list);
  else
    FUZZ_CHECK(status.message && status.message[0]);
  return 0;
}
