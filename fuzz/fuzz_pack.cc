// fuzz_pack: `kpack` from bytes to an image in memory, the packing path every user runs. The first
// byte picks the output (codec, raw layout, bzImage or --elf, a paging hint); the rest is the input file as
// load_kernel reads it (a vmlinux, a stock or kpack bzImage, a kpack ELF): the ELF and section
// readers, the relocation table computed from .rela sections, the embedded configuration and the
// banner (kernel_facts), then the layout, the frames, the codecs and the image and ELF writers.
// Whatever the input, an error is one line naming the file; an image that is written must read back
// as a kpack image whose kernel is the input's, byte for byte (compressed outputs keep it whole).
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_packer_checks.h"
#include "fuzz/self_test.h"
#include "packer/input/bzimage_reader.h"
#include "packer/input/elf_reader.h"
#include "packer/image/elf_writer.h"
#include "packer/image/image_writer.h"
#include "packer/input/kernel_input.h"
#include "packer/image/layout.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

namespace {

const std::string kInput = "fuzz.vmlinux", kOutput = "fuzz.img";
const Context kFiles{.input = kInput, .output = kOutput};
// Inputs past 1 MiB decoded spend the run in the codecs (libFuzzer's -max_len keeps most far below).
// Every buffer of a span's size is fresh memory that the kernel zeroes page by page (ASan maps and
// unmaps each large allocation), which on CI's virtual machines costs more than all the packing: a
// 256 KiB span keeps the target above 800 inputs a second there, where 4 MiB gave under 400.
constexpr uint64_t kMaxDecoded = 1 << 20, kMaxSpan = 256 << 10;

struct Choice {
  Codec codec;
  RawLayout layout;
  bool elf;
};

Choice choice_of(uint8_t b) {
  static constexpr Codec kCodecs[] = {Codec::kRaw, Codec::kLz4, Codec::kZstd, Codec::kGzip, Codec::kXz};
  return {kCodecs[(b & 7) % 5], (b & 8) ? RawLayout::kCompact : RawLayout::kInPlace, (b & 16) != 0};
}

// The image's kernel, extracted as `kpack extract` does, is the input's ELF in the compact layout
// (a compressed payload stores every byte of it; a raw one may leave zero runs out, which extract
// joins again), and its relocation table the input's.
void check_extracted(const KernelInput& input, const Result<KernelPayload>& out, Codec codec) {
  FUZZ_CHECK(out.ok());
  FUZZ_CHECK(out.value().relocation_table == input.relocation_table);
  if (codec != Codec::kRaw) FUZZ_CHECK(out.value().elf == layout_compact(input).bytes);
}
void check_round_trip(const KernelInput& input, std::span<const uint8_t> image, const PackedPayload& payload,
                      Codec codec) {
  check_extracted(input, extract_kernel(payload, {image, kOutput}, kMaxDecoded + (64 << 20)), codec);
}

// An image the packer wrote reads back as a kpack image.
void check_read_back(const Result<KpackElf>& read) { FUZZ_CHECK(read.ok()); }
void check_read_back(const Result<BzImage>& read) { FUZZ_CHECK(read.ok() && read.value().packer_record.has_value()); }

// A writer's error names the kernel when the kernel's layout is at fault, else the image.
void check_writer_message(const Error& error) {
  check_message(error, error.message.rfind(kInput + ": ", 0) == 0 ? kInput : kOutput);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Choice choice = choice_of(data[0]);
  std::vector<uint8_t> file(data + 1, data + size);
  // Bit 5: --5level or --no-5level (bit 6), else the kernel's own facts (config, banner) decide.
  KernelHints hints;
  if (data[0] & 32) hints.five_level = (data[0] & 64) != 0;
  Result<KernelInput> input = load_kernel_from(kFiles, std::move(file), hints);
  if (!input) return check_message(input.error(), kInput), 0;
  // A raw image holds the kernel's whole span, an ELF output its memory: keep both small.
  if (input->elf.size() > kMaxDecoded || input->kernel.span() > kMaxSpan) return 0;
  PackOptions options;
  // In place, a raw image's kernel sits at its floor's distance from 1 MiB, zeros in between: a
  // floor of 1 MiB leaves none unless the kernel's alignment asks for them.
  options.kernel_address = 1 << 20;
  options.compress = {choice.codec, choice.codec == Codec::kRaw ? 0 : 1, 1};
  options.raw_layout = choice.layout;
  ImageBlobs blobs = built_in_blobs(choice.codec);
  if (choice.elf) {
    Result<ElfImage> elf = build_elf_image(kFiles, *input, options, blobs);
    if (!elf) return check_writer_message(elf.error()), 0;
    Result<KpackElf> read = read_kpack_elf({elf->bytes, kOutput});
    check_read_back(read);
    check_round_trip(*input, elf->bytes, read->payload, choice.codec);
    return 0;
  }
  Result<std::vector<uint8_t>> image = build_image(kFiles, *input, options, blobs);
  if (!image) return check_writer_message(image.error()), 0;
  Result<BzImage> read = read_bzimage({*image, kOutput});
  check_read_back(read);
  check_round_trip(*input, *image, *read, choice.codec);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above with a spoiled read-back or extraction of a synthetic kernel.
namespace {

KernelInput good_input() {
  Result<KernelInput> input = kernel_input_from_elf(test::make_kernel_elf(test::typical_segments()), kInput);
  FUZZ_REQUIRE(input.ok());
  input->relocation_table = {0, 0, 0, 0, 0, 0, 0, 0};
  return *input;
}

KernelPayload extracted(const KernelInput& input) { return {layout_compact(input).bytes, input.relocation_table}; }

}  // namespace

FUZZ_SPOIL("a written ELF image that does not read back") { check_read_back(Result<KpackElf>(Error{"refused"})); }
FUZZ_SPOIL("a written bzImage without its kpack record") { check_read_back(Result<BzImage>(BzImage{})); }
FUZZ_SPOIL("an image whose kernel does not extract") {
  check_extracted(good_input(), Result<KernelPayload>(Error{"refused"}), Codec::kLz4);
}
FUZZ_SPOIL("an image that lost its relocation table") {
  KernelInput input = good_input();
  KernelPayload out = extracted(input);
  out.relocation_table.clear();
  check_extracted(input, out, Codec::kLz4);
}
FUZZ_SPOIL("a compressed image whose kernel came back changed") {
  KernelInput input = good_input();
  KernelPayload out = extracted(input);
  out.elf.back() ^= 1;
  check_extracted(input, out, Codec::kLz4);
}
#endif
