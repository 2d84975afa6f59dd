// kpack_host_bench VMLINUX [--runs N] [--codecs raw,gzip,lz4,zstd,xz] [--chunk BYTES]
//
// --threads N (N >= 2) adds the engine on N threads (the caller and N-1 helpers, as the stub's CPUs):
// wall-clock medians of the engine on 1 and on N threads, interleaved, and their ratio (not for raw,
// which has nothing to decode).
// --chunk cuts regions into frames of at most BYTES (0: whole regions) instead of the codec's
// default (packer/image/frames.h), to measure what independent frames cost in size and speed.
//
// For each codec: packs VMLINUX in memory exactly as `kpack --CODEC` does, then times (median of N
// interleaved runs, warm buffers, one thread, thread CPU time):
//   engine   unpack_kernel on the image loaded at 1 MiB of a flat "RAM": the code the stub runs
//   library  the codec library's own streaming decoder over the same payload into a flat buffer,
//            then the frames' coding undone (what any program would write; the bar the engine
//            must meet: >= 0.95x)
//   stock    the stock decompressor's shape: the whole ELF decoded into a buffer, then each
//            segment memmoved to its destination (same frames as kpack, so only the shape differs)
//   memcpy   raw only: copying the memory image once, what a loader that moves it would pay
// and checks the engine's output against the vmlinux segments. Prints one table row per codec.
// For codecs whose frames carry the frame table's XXH3 (lz4, zstd) a second table prices the
// verification options on their own, each frame hashed where the engine would hash it:
//   packed   XXH3-64 of each frame's compressed bytes (what the digest covers)
//   decoded  XXH3-64 of each frame's decoded bytes (what it covered before record version 4)
//   sum      a 64-bit word sum of the compressed bytes: the floor for any cheaper digest
//   tails    zeroing the bytes past each segment's p_filesz, right after a decode: the engine's one
//            job besides the digest that the library's decode does not do (the packer trims the
//            segments' trailing zeros, the kernel must find them zeroed)
// and the engine's time over the library's (target <= 1.05), then over the library's plus tails. A third
// table decodes frame by frame and prices the digest right before each frame's decode against right
// after it (the engine's order).
//
// kpack_host_bench --engine-once IMAGE [--kaslr] runs only the engine, once, on a kpack image file: for
//   valgrind --tool=callgrind --toggle-collect='kpack::unpack_kernel*' to count its instructions
//   by function (the stub links the same codec archives, so the counts match the guest's).
// kpack_host_bench --library-once IMAGE runs only the library's decoder, once, over the same image's
//   payload: callgrind --toggle-collect='*library_decode*' gives the count the engine's is held to.
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "formats/call_targets.h"
#include "formats/kpack_image.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "packer/input/bzimage_reader.h"
#include "bench/lean_memory.h"
#include "stub/unpack/packer_record_unpack.h"
#include "stub/unpack/xxh3.h"
#include "tests/support/thread_workers.h"

using namespace kpack;

namespace {

constexpr uint64_t kRamSize = 512ull << 20;  // the VM size the guest benchmark uses
constexpr uint64_t kImageBase = 0x100000;    // where QEMU loads the protected-mode part

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "kpack_host_bench: %s\n", message.c_str());
  std::exit(1);
}

// CPU time of this thread: the machine is shared, and time spent descheduled is not the code's.
double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

double seconds_of(const std::function<void()>& f) {
  double start = thread_seconds();
  f();
  return thread_seconds() - start;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One packed image, loaded into RAM as QEMU would load it.
struct Loaded {
  Codec codec;
  uint64_t image_bytes = 0;
  PackerRecord info{};
  uint64_t packer_record_offset = 0;
  std::span<const uint8_t> payload;    // inside RAM
  std::span<const FrameEntry> frames;  // inside RAM
};

Loaded load_image(const std::vector<uint8_t>& image, Codec codec, bench::LeanMemory& ram) {
  Loaded l{codec};
  l.image_bytes = image.size();
  Result<BzImage> read = read_bzimage({image, "bench"});
  if (!read) die(read.error().message);
  if (!read->packer_record) die("not a kpack image");
  l.info = *read->packer_record;
  l.packer_record_offset = read->packer_record_offset;
  uint64_t protected_size = image.size() - read->setup_size;
  std::memcpy(ram.writable(kImageBase, protected_size), image.data() + read->setup_size, protected_size);
  l.payload = {ram.readable(kImageBase + l.info.payload_offset, l.info.payload_size), l.info.payload_size};
  uint64_t table_bytes = uint64_t{l.info.frame_count} * sizeof(FrameEntry);
  l.frames = {reinterpret_cast<const FrameEntry*>(ram.readable(kImageBase + l.info.frame_table_offset, table_bytes)),
              l.info.frame_count};
  return l;
}

UnpackResult run_engine(const Loaded& l, bench::LeanMemory& ram, const KaslrRequest& kaslr = {}, uint32_t helpers = 0) {
  FreeMemory free;
  if (!free.add(Range{kImageBase, ram.size()}).ok()) die("FreeMemory.add");
  NoTrace trace;
  UnpackResult result;
  test::ThreadWorkers workers;
  StubStatus status = unpack_from_packer_record(l.info, kImageBase, kaslr, free, ram, trace, &result,
                                                helpers ? &workers : nullptr, helpers);
  if (!status.ok()) die(std::string("engine: ") + status.message);
  return result;
}

// The library's own decoder over every frame of the payload; returns the bytes produced.
uint64_t library_decode(Codec codec, std::span<const uint8_t> src, uint8_t* dst, uint64_t capacity) {
  if (codec == Codec::kZstd) {
    static ZSTD_DCtx* ctx = ZSTD_createDCtx();
    size_t n = ZSTD_decompressDCtx(ctx, dst, capacity, src.data(), src.size());  // all frames
    if (ZSTD_isError(n)) die(std::string("zstd: ") + ZSTD_getErrorName(n));
    return n;
  }
  if (codec == Codec::kLz4) {
    static LZ4F_dctx* ctx = [] {
      LZ4F_dctx* c = nullptr;
      LZ4F_createDecompressionContext(&c, LZ4F_VERSION);
      return c;
    }();
    uint64_t in = 0, out = 0;
    while (in < src.size()) {  // LZ4F starts the next frame by itself after one ends
      size_t src_size = src.size() - in, dst_size = capacity - out;
      size_t r = LZ4F_decompress(ctx, dst + out, &dst_size, src.data() + in, &src_size, nullptr);
      if (LZ4F_isError(r)) die(std::string("lz4: ") + LZ4F_getErrorName(r));
      in += src_size;
      out += dst_size;
      if (src_size == 0 && dst_size == 0) die("lz4: no progress");
    }
    return out;
  }
  if (codec == Codec::kGzip) {
    z_stream s{};
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) die("zlib init");
    s.next_in = const_cast<Bytef*>(src.data());
    s.avail_in = static_cast<uInt>(src.size());
    s.next_out = dst;
    s.avail_out = static_cast<uInt>(capacity);
    while (s.avail_in) {  // one member per region; one Z_FINISH call each, as zlib recommends
      int r = inflate(&s, Z_FINISH);
      if (r != Z_STREAM_END) die("zlib inflate " + std::to_string(r));
      if (s.avail_in && inflateReset2(&s, 16 + MAX_WBITS) != Z_OK) die("zlib reset");
    }
    uint64_t out = static_cast<uint64_t>(s.next_out - dst);
    inflateEnd(&s);
    return out;
  }
  if (codec == Codec::kXz) {
    // One decoder for every stream (LZMA_CONCATENATED) and every run: its dictionary is allocated
    // once, as a program decoding many streams would keep it.
    static lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) die("liblzma init");
    s.next_in = src.data();
    s.avail_in = src.size();
    s.next_out = dst;
    s.avail_out = capacity;
    lzma_ret r = lzma_code(&s, LZMA_FINISH);
    if (r != LZMA_STREAM_END) die("liblzma " + std::to_string(r));
    return s.total_out;
  }
  std::memcpy(dst, src.data(), src.size());
  return src.size();
}

// The library's decode of the whole payload, then each frame's coding undone (formats/call_targets.h):
// what any program that decodes a kpack payload to the kernel must do.
uint64_t library_decode_kernel(const Loaded& l, uint8_t* dst, uint64_t capacity) {
  uint64_t produced = library_decode(l.codec, l.payload, dst, capacity);
  for (const FrameEntry& f : l.frames) undo_frame_coding(f, dst + f.file_offset);
  return produced;
}

// Folds every 64-bit word of `bytes` (and the tail's bytes) into one sum: a single changed byte
// changes it, and no digest reads the same bytes for less.
uint64_t word_sum(const uint8_t* bytes, uint64_t size) {
  uint64_t sum = 0, word;
  uint64_t at = 0;
  for (; at + 8 <= size; at += 8) std::memcpy(&word, bytes + at, 8), sum += word;
  for (; at < size; ++at) sum += bytes[at];
  return sum;
}

// Sinks the hashes so the compiler keeps every pass.
volatile uint64_t g_hash_sink;

double wall_seconds_of(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Row {
  std::string codec;
  uint64_t image = 0, segments = 0, moved = 0;
  double engine = 0, library = 0, stock = 0, memcpy = 0;
  double wall_one = 0, wall_many = 0;                                   // --threads
  double hash_packed = 0, hash_decoded = 0, sum_packed = 0, tails = 0;  // XXH3 codecs only
  double frames_alone = 0, hash_before = 0, hash_after = 0;             // XXH3 codecs only
  bool correct = false;
};

// The verification options on their own, each frame hashed as the engine takes them; the decoded
// bytes are hashed right after the library wrote them, as a check after decoding would. The tails
// are zeroed right after a decode too, as the engine zeroes them after its frames.
void time_verification(const Loaded& l, uint8_t* flat, uint64_t capacity, std::span<const std::span<uint8_t>> tails,
                       int runs, Row& row) {
  auto over_frames = [&](auto&& hash, bool decoded) {
    uint64_t h = 0;
    for (const FrameEntry& f : l.frames)
      h ^= decoded ? hash(flat + f.file_offset, f.size) : hash(l.payload.data() + f.payload_offset, f.payload_size);
    g_hash_sink = h;
  };
  // Each frame decoded alone by the library, its digest taken right before the decode (the hash
  // pulls the frame into cache for the decoder) or right after it (the engine's order: the decoder
  // pulled it in for the hash).
  enum HashAt { kNowhere, kBefore, kAfter };
  // One CPUID-free function for every frame, as each frame decoder picks it once: CPUID traps to
  // the hypervisor in a VM (about 8 us each on the benchmark machine).
  const Xxh3Function xxh3 = xxh3_for_this_cpu();
  auto frame_by_frame = [&](HashAt at) {
    uint64_t h = 0;
    for (const FrameEntry& f : l.frames) {
      std::span<const uint8_t> src{l.payload.data() + f.payload_offset, f.payload_size};
      if (at == kBefore) h ^= xxh3(src.data(), src.size());
      library_decode(l.codec, src, flat + f.file_offset, capacity - f.file_offset);
      if (at == kAfter) h ^= xxh3(src.data(), src.size());
    }
    g_hash_sink = h;
  };
  std::vector<double> packed, decoded, sum, zeroed, alone, before, after;
  for (int i = 0; i < runs; ++i) {
    alone.push_back(seconds_of([&] { frame_by_frame(kNowhere); }));
    before.push_back(seconds_of([&] { frame_by_frame(kBefore); }));
    after.push_back(seconds_of([&] { frame_by_frame(kAfter); }));
    library_decode(l.codec, l.payload, flat, capacity);
    zeroed.push_back(seconds_of([&] {
      for (std::span<uint8_t> tail : tails) std::memset(tail.data(), 0, tail.size());
    }));
    library_decode(l.codec, l.payload, flat, capacity);
    decoded.push_back(seconds_of([&] { over_frames(xxh3, true); }));
    packed.push_back(seconds_of([&] { over_frames(xxh3, false); }));
    sum.push_back(seconds_of([&] { over_frames(word_sum, false); }));
  }
  row.hash_packed = median(packed), row.hash_decoded = median(decoded), row.sum_packed = median(sum);
  row.tails = median(zeroed);
  row.frames_alone = median(alone), row.hash_before = median(before), row.hash_after = median(after);
}

// VMLINUX packed exactly as `kpack --CODEC` packs it.
std::vector<uint8_t> pack(const KernelInput& input, Codec codec, std::optional<uint64_t> chunk) {
  PackOptions options;
  options.compress.codec = codec;
  options.compress.level = default_level(codec);
  options.compress.threads = std::max(1u, std::thread::hardware_concurrency());
  // 0 asks for whole regions: no region is as large as 2^40 bytes.
  if (chunk) options.compress.chunk_size = *chunk ? *chunk : uint64_t{1} << 40;
  std::fprintf(stderr, "packing %s...\n", codec_name(codec));
  Result<std::vector<uint8_t>> image =
      build_image(Context{.output = "bench"}, input, options, built_in_blobs(options.compress.codec));
  if (!image) die(image.error().message);
  return std::move(*image);
}

// The bytes past each segment's p_filesz in a kernel laid out at `kernel`: what the engine zeroes.
std::vector<std::span<uint8_t>> zero_tails(const KernelHeaders& k, uint8_t* kernel) {
  std::vector<std::span<uint8_t>> tails;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    if (s.memsz > s.filesz) tails.push_back({kernel + (s.paddr - k.physical.begin) + s.filesz, s.memsz - s.filesz});
  }
  return tails;
}

// Whether the kernel at `base` holds every segment's file bytes, except those the kernel clears
// itself: the engine leaves them as RAM had them (7.x's data segment carries .bss and .brk as file
// bytes, and this RAM still holds the previous codec's kernel there).
bool kernel_in_place(const KernelInput& input, bench::LeanMemory& ram, uint64_t base) {
  const KernelHeaders& k = input.kernel;
  const Range cleared = input.cleared_by_kernel;
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    const Range bytes = range_of(s.paddr - k.physical.begin, s.filesz);
    const Range compared[] = {{bytes.begin, std::min(bytes.end, std::max(bytes.begin, cleared.begin))},
                              {std::max(bytes.begin, std::min(bytes.end, cleared.end)), bytes.end}};
    for (Range part : compared) {
      if (part.empty()) continue;
      const uint8_t* at = ram.readable(base + part.begin, part.size());
      if (!at || std::memcmp(at, input.elf.data() + s.offset + (part.begin - bytes.begin), part.size()) != 0)
        return false;
    }
  }
  return true;
}

Row bench_codec(const KernelInput& input, Codec codec, int runs, std::optional<uint64_t> chunk, uint32_t threads,
                bench::LeanMemory& ram) {
  std::vector<uint8_t> image = pack(input, codec, chunk);
  Loaded l = load_image(image, codec, ram);

  Row row{codec_name(codec)};
  row.image = l.image_bytes;
  const KernelHeaders& k = input.kernel;
  for (uint32_t i = 0; i < k.segment_count; ++i) row.segments += k.segments[i].filesz;

  // Warm-up run, which also proves the engine's output is the kernel.
  UnpackResult r = run_engine(l, ram);
  row.moved = r.moved;
  row.correct = kernel_in_place(input, ram, r.base);

  // Flat buffers for the baselines, touched once so page faults are not timed.
  uint64_t capacity = k.file_end + (64 << 20);
  std::vector<uint8_t> flat(capacity, 1), destination(k.span(), 1);
  // The payload's ELF layout (compact for compressed codecs), to find the segments in `flat`.
  uint64_t elf_size = library_decode_kernel(l, flat.data(), capacity);
  KernelHeaders payload_elf;
  if (!parse_kernel_headers(flat.data(), elf_size, elf_size, &payload_elf).ok()) die("decoded payload is not an ELF");
  std::vector<std::span<uint8_t>> tails = zero_tails(payload_elf, destination.data());

  auto stock = [&] {
    library_decode_kernel(l, flat.data(), capacity);
    for (uint32_t i = 0; i < payload_elf.segment_count; ++i) {
      const LoadSegment& s = payload_elf.segments[i];
      std::memmove(destination.data() + (s.paddr - payload_elf.physical.begin), flat.data() + s.offset, s.filesz);
    }
  };
  std::vector<double> engine, library, stock_times, copy, wall_one, wall_many;
  for (int i = 0; i < runs; ++i) {  // interleaved so drift in machine load hits every variant alike
    engine.push_back(seconds_of([&] { run_engine(l, ram); }));
    if (threads > 1 && codec != Codec::kRaw) {  // raw: nothing to decode, no helper starts (nor an AP)
      wall_one.push_back(wall_seconds_of([&] { run_engine(l, ram); }));
      wall_many.push_back(wall_seconds_of([&] {
        if (run_engine(l, ram, {}, threads - 1).workers_started != threads - 1) die("a helper thread did not start");
      }));
    }
    library.push_back(seconds_of([&] { library_decode_kernel(l, flat.data(), capacity); }));
    stock_times.push_back(seconds_of(stock));
    if (codec == Codec::kRaw) {
      uint64_t first = payload_elf.segments[0].offset;
      copy.push_back(
          seconds_of([&] { std::memcpy(destination.data(), l.payload.data() + first, payload_elf.file_end - first); }));
    }
  }
  row.engine = median(engine);
  row.library = median(library);
  row.stock = median(stock_times);
  row.memcpy = copy.empty() ? 0 : median(copy);
  row.wall_one = wall_one.empty() ? 0 : median(wall_one);
  row.wall_many = wall_many.empty() ? 0 : median(wall_many);
  if (digest_for(codec) == FrameDigest::kXxh3) time_verification(l, flat.data(), capacity, tails, runs, row);
  return row;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) die("cannot open " + path);
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) bytes.insert(bytes.end(), buffer, buffer + n);
  std::fclose(f);
  return bytes;
}

// With `kaslr`, both bases are drawn (fixed draws: the run is repeatable) and the relocation table
// is applied: callgrind --toggle-collect='kpack::relocate_kernel*' counts that part alone.
int engine_once(const std::string& path, bool kaslr) {
  std::vector<uint8_t> image = read_file(path);
  bench::LeanMemory ram(kRamSize);
  Loaded l = load_image(image, Codec::kRaw, ram);
  l.codec = static_cast<Codec>(uint32_t{l.info.codec});
  KaslrRequest request;
  request.physical = request.virtual_base = kaslr;
  request.physical_random = 0x1234567;
  request.virtual_random = 0x89abcdef;
  UnpackResult r;
  double seconds = seconds_of([&] { r = run_engine(l, ram, request); });
  std::printf(
      "%s: %.3f ms thread CPU; decoded %llu bytes, moved %llu, kernel at %#llx, virtual offset %#llx, "
      "%llu relocations\n",
      codec_name(l.codec), seconds * 1e3, static_cast<unsigned long long>(r.decoded),
      static_cast<unsigned long long>(r.moved), static_cast<unsigned long long>(r.base),
      static_cast<unsigned long long>(r.virtual_offset), static_cast<unsigned long long>(r.relocations));
  return 0;
}

// The output buffer has bench_codec's room to spare (LZ4F decodes a block short of room through a
// copy) and is touched before the decode, as the engine's RAM is by the image's load.
int library_once(const std::string& path) {
  std::vector<uint8_t> image = read_file(path);
  bench::LeanMemory ram(kRamSize);
  Loaded l = load_image(image, Codec::kRaw, ram);
  l.codec = static_cast<Codec>(uint32_t{l.info.codec});
  uint64_t decoded = l.frames.empty() ? l.payload.size() : l.frames.back().file_offset + l.frames.back().size;
  uint64_t capacity = decoded + (64 << 20);
  std::vector<uint8_t> flat(capacity, 1);
  uint64_t produced = 0;
  double seconds = seconds_of([&] { produced = library_decode(l.codec, l.payload, flat.data(), capacity); });
  std::printf("%s: %.3f ms thread CPU; library decoded %llu bytes\n", codec_name(l.codec), seconds * 1e3,
              static_cast<unsigned long long>(produced));
  return 0;
}

// The verification tables, for the codecs whose frames carry XXH3.
void print_verification(const std::vector<Row>& rows) {
  std::printf(
      "\n# verification, median CPU ms; eng/lib is the engine's time over the library's (target <= 1.05), "
      "eng/l+t over the library's plus the tails'\n");
  std::printf("%-5s %9s %9s %9s %9s %9s %9s %8s %8s\n", "codec", "engine", "library", "packed", "decoded", "sum",
              "tails", "eng/lib", "eng/l+t");
  for (const Row& r : rows)
    if (r.hash_packed > 0)
      std::printf("%-5s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8.3f %8.3f\n", r.codec.c_str(), r.engine * 1e3,
                  r.library * 1e3, r.hash_packed * 1e3, r.hash_decoded * 1e3, r.sum_packed * 1e3, r.tails * 1e3,
                  r.engine / r.library, r.engine / (r.library + r.tails));
  std::printf(
      "\n# where the digest runs, median CPU ms: each frame decoded alone by the library (alone), its XXH3 taken "
      "right before the decode (before) or right after it (after, the engine's order)\n");
  std::printf("%-5s %9s %9s %9s %9s %9s\n", "codec", "alone", "before", "after", "+before", "+after");
  for (const Row& r : rows)
    if (r.hash_packed > 0)
      std::printf("%-5s %9.2f %9.2f %9.2f %9.2f %9.2f\n", r.codec.c_str(), r.frames_alone * 1e3, r.hash_before * 1e3,
                  r.hash_after * 1e3, (r.hash_before - r.frames_alone) * 1e3, (r.hash_after - r.frames_alone) * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--engine-once")
    return engine_once(argv[2], argc == 4 && std::string(argv[3]) == "--kaslr");
  if (argc == 3 && std::string(argv[1]) == "--library-once") return library_once(argv[2]);
  std::string path, codecs = "raw,gzip,lz4,zstd,xz";
  int runs = 11;
  std::optional<uint64_t> chunk;
  uint32_t threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--codecs" && i + 1 < argc)
      codecs = argv[++i];
    else if (a == "--chunk" && i + 1 < argc)
      chunk = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--threads" && i + 1 < argc)
      threads = std::clamp(std::atoi(argv[++i]), 1, int{kMaxFrameWorkers} + 1);
    else if (a[0] != '-' && path.empty())
      path = a;
    else
      die("usage: kpack_host_bench VMLINUX [--runs N] [--codecs raw,gzip,lz4,zstd,xz] [--chunk BYTES] [--threads N]");
  }
  if (path.empty())
    die("usage: kpack_host_bench VMLINUX [--runs N] [--codecs raw,gzip,lz4,zstd,xz] [--chunk BYTES] [--threads N]");
  Result<KernelInput> input = load_kernel(Context{.input = path});
  if (!input) die(input.error().message);
  input->relocation_table.clear();  // the engine never decodes them; keep them out of the library's payload too

  bench::LeanMemory ram(kRamSize);
  std::vector<Row> rows;
  std::printf("# %s, %d runs, median CPU ms; ratios are throughput relative to the engine's\n", path.c_str(), runs);
  std::printf("%-5s %10s %10s %9s %9s %9s %9s %8s %8s %6s %s\n", "codec", "image", "segments", "engine", "library",
              "stock", "memcpy", "eng/lib", "eng/stk", "moved", "check");
  for (Codec codec : {Codec::kRaw, Codec::kGzip, Codec::kLz4, Codec::kZstd, Codec::kXz}) {
    if (("," + codecs + ",").find(std::string(",") + codec_name(codec) + ",") == std::string::npos) continue;
    Row r = rows.emplace_back(bench_codec(*input, codec, runs, chunk, threads, ram));
    std::printf("%-5s %10llu %10llu %9.2f %9.2f %9.2f %9.2f %8.3f %8.3f %6llu %s\n", r.codec.c_str(),
                static_cast<unsigned long long>(r.image), static_cast<unsigned long long>(r.segments), r.engine * 1e3,
                r.library * 1e3, r.stock * 1e3, r.memcpy * 1e3, r.library / r.engine, r.stock / r.engine,
                static_cast<unsigned long long>(r.moved), r.correct ? "ok" : "MISMATCH");
    if (r.wall_many > 0)
      std::printf("%-5s engine wall ms: 1 thread %.2f, %u threads %.2f, speedup %.2fx\n", r.codec.c_str(),
                  r.wall_one * 1e3, threads, r.wall_many * 1e3, r.wall_one / r.wall_many);
    std::fflush(stdout);
  }
  print_verification(rows);
  return 0;
}
