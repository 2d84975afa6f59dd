// fuzz_bzimage: the whole of `kpack info` on arbitrary files — the boot-protocol header, the kpack
// record (checked as the stub checks it), the payload's stream decoders (gzip, xz, lz4 legacy and
// frame, zstd, raw), the ELF extent that splits the payload, and the placement report, which runs
// the stub's engine on a simulated machine. Inputs that are not bzImages go straight to the stream
// decoders, so those are fuzzed without the fuzzer first having to build a valid header around them.
#include <cstdio>
#include <span>
#include <string>

#include "packer/input/bzimage_reader.h"
#include "packer/codecs/codecs.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_packer_checks.h"
#include "packer/read/info.h"

using namespace kpack;

namespace {

// A payload may claim up to 1 GiB and the report simulates 512 MiB; runs stay fast with less of
// both (the seeds' kernels are a few hundred KiB).
constexpr uint64_t kMaxDecoded = 4 << 20;
constexpr InfoLimits kLimits{kMaxDecoded, 32 << 20};
const std::string kName = "fuzz.img";

// Every error is one line that starts with the file's name.
void check_message(const Error& error) { kpack::check_message(error, kName); }

void check_split(const Result<KernelPayload>& payload) {
  if (!payload) return check_message(payload.error());
  Result<uint64_t> extent = elf_file_extent({payload.value().elf, kName});
  FUZZ_CHECK(extent.ok() && *extent == payload.value().elf.size());
  FUZZ_CHECK(payload.value().elf.size() + payload.value().relocation_table.size() <= kMaxDecoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> file(data, size);
  if (!looks_like_bzimage(file)) {
    std::optional<StreamFormat> format = detect_stream_format(file);
    if (!format) return 0;
    Result<std::vector<uint8_t>> decoded = decode_stream(*format, {file, kName}, kMaxDecoded);
    if (!decoded) return check_message(decoded.error()), 0;
    FUZZ_CHECK(decoded->size() <= kMaxDecoded);
    Result<uint64_t> extent = elf_file_extent({*decoded, kName});
    if (!extent) return check_message(extent.error()), 0;
    FUZZ_CHECK(*extent <= decoded->size());
    return 0;
  }
  Result<BzImage> image = read_bzimage({file, kName});
  if (!image) return check_message(image.error()), 0;
  FUZZ_CHECK(image->payload_size > 0 && image->payload_offset + image->payload_size <= size);
  FUZZ_CHECK(image->setup_size < size && image->payload_offset >= image->setup_size);
  if (image->packer_record) FUZZ_CHECK(uint32_t{image->packer_record->codec} < kCodecCount);
  check_split(extract_kernel(*image, {file, kName}, kMaxDecoded));
  check_info(file, kName, kLimits);
  return 0;
}
