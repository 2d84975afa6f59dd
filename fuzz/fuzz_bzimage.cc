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
#include "fuzz/self_test.h"
#include "packer/read/info.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

namespace {

// A payload may claim up to 1 GiB and the report simulates 512 MiB; runs stay fast with less of
// both (the seeds' kernels are a few hundred KiB).
constexpr uint64_t kMaxDecoded = 4 << 20;
constexpr InfoLimits kLimits{kMaxDecoded, 32 << 20};
const std::string kName = "fuzz.img";

// Every error is one line that starts with the file's name.
void check_message(const Error& error) { kpack::check_message(error, kName); }

// A stream decodes within its bound, and an ELF's extent lies within the decoded bytes.
void check_decoded(const Result<std::vector<uint8_t>>& decoded) {
  if (!decoded) return check_message(decoded.error());
  FUZZ_CHECK(decoded.value().size() <= kMaxDecoded);
}
void check_extent(const Result<uint64_t>& extent, uint64_t decoded_size) {
  if (!extent) return check_message(extent.error());
  FUZZ_CHECK(extent.value() <= decoded_size);
}

// The header's payload and setup lie within the file, and a kpack record names a known codec.
void check_image(const BzImage& image, uint64_t size) {
  FUZZ_CHECK(image.payload_size > 0 && image.payload_offset + image.payload_size <= size);
  FUZZ_CHECK(image.setup_size < size && image.payload_offset >= image.setup_size);
  if (image.packer_record) FUZZ_CHECK(uint32_t{image.packer_record->codec} < kCodecCount);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> file(data, size);
  if (!looks_like_bzimage(file)) {
    std::optional<StreamFormat> format = detect_stream_format(file);
    if (!format) return 0;
    Result<std::vector<uint8_t>> decoded = decode_stream(*format, {file, kName}, kMaxDecoded);
    check_decoded(decoded);
    if (decoded) check_extent(elf_file_extent({*decoded, kName}), decoded->size());
    return 0;
  }
  Result<BzImage> image = read_bzimage({file, kName});
  if (!image) return check_message(image.error()), 0;
  check_image(*image, size);
  check_split(extract_kernel(*image, {file, kName}, kMaxDecoded), kName, kMaxDecoded);
  check_info(file, kName, kLimits);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above, or of fuzz_packer_checks.h, with a spoiled value.
namespace {

KernelPayload good_payload() { return {test::make_kernel_elf(test::typical_segments()), {}}; }

BzImage good_image() {
  BzImage image;
  image.setup_size = 0x4000;
  image.protected_offset = image.setup_size;
  image.payload_offset = 0x5000;
  image.payload_size = 0x1000;
  return image;
}

}  // namespace

FUZZ_SPOIL("an error that does not start with the file's name") { check_message(Error{"problem"}); }
FUZZ_SPOIL("an error of two lines") { check_message(Error{kName + ": problem\nmore"}); }
FUZZ_SPOIL("a report that wrote over the live image") { check_report("... WROTE OVER THE LIVE IMAGE ..."); }
FUZZ_SPOIL("a report of an unacceptable kernel address") { check_report("... KERNEL ADDRESS NOT ACCEPTABLE ..."); }
FUZZ_SPOIL("a stream decoded past its bound") { check_decoded(std::vector<uint8_t>(kMaxDecoded + 1)); }
FUZZ_SPOIL("an extent past the decoded bytes") { check_extent(uint64_t{10}, 9); }
FUZZ_SPOIL("a payload past the end of the file") { check_image(good_image(), 0x5FFF); }
FUZZ_SPOIL("a payload inside the setup") {
  BzImage image = good_image();
  image.setup_size = 0x6000;
  check_image(image, 0x10000);
}
FUZZ_SPOIL("a kpack record of an unknown codec") {
  BzImage image = good_image();
  image.packer_record.emplace();
  image.packer_record->codec = kCodecCount;
  check_image(image, 0x10000);
}
FUZZ_SPOIL("a kernel split off with bytes of the relocations") {
  KernelPayload payload = good_payload();
  payload.elf.push_back(0);
  check_split(payload, kName, kMaxDecoded);
}
FUZZ_SPOIL("a kernel decoded past the bound") {
  KernelPayload payload = good_payload();
  payload.relocation_table.resize(kMaxDecoded);
  check_split(payload, kName, kMaxDecoded);
}
#endif
