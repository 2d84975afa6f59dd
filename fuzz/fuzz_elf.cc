// fuzz_elf: the ELF parser shared by the stub and the packer, and the packer's two payload layouts
// on every ELF the parser accepts. A layout must produce an ELF that parses again, with the same
// segments at the same physical addresses holding the same bytes.
#include <cstring>
#include <vector>

#include "formats/elf64.h"
#include "fuzz/fuzz_check.h"
#include "stub/unpack/kernel_headers.h"
#include "packer/image/layout.h"
#include "tests/support/same_segment.h"

using namespace kpack;

namespace {

// The mirrored layout holds the whole span in memory; beyond this the fuzzer would only measure malloc.
constexpr uint64_t kMaxMirroredSpan = 1 << 20;

void check_accepted(const KernelHeaders& k, uint64_t file_size) {
  FUZZ_CHECK(k.segment_count >= 1 && k.segment_count <= kMaxLoadSegments);
  FUZZ_CHECK(k.headers_end <= k.segments[0].offset);
  FUZZ_CHECK(is_power_of_two(k.alignment) && k.alignment >= kMinKernelAlignment);
  FUZZ_CHECK(k.physical.begin % k.alignment == 0);
  FUZZ_CHECK(k.entry >= k.physical.begin && k.entry < k.physical.end);
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    FUZZ_CHECK(s.filesz <= s.memsz && s.memsz > 0);
    FUZZ_CHECK(s.offset + s.filesz >= s.offset && s.offset + s.filesz <= file_size);
    FUZZ_CHECK(s.paddr >= kLowestSegmentAddress && s.paddr + s.memsz <= kHighestSegmentEnd);
    FUZZ_CHECK(k.physical.contains(range_of(s.paddr, s.memsz)));
    if (i > 0) FUZZ_CHECK(k.segments[i - 1].offset + k.segments[i - 1].filesz <= s.offset);
  }
}

// The rewritten ELF keeps every segment's place in memory and its bytes.
void check_layout(const KernelInput& input, const PayloadElf& out, bool mirrored) {
  KernelHeaders again;
  FUZZ_CHECK(parse_kernel_headers(out.bytes.data(), out.bytes.size(), out.bytes.size(), &again).ok());
  const KernelHeaders& k = input.kernel;
  FUZZ_CHECK(again.segment_count == k.segment_count);
  FUZZ_CHECK(again.entry == k.entry && again.physical.begin == k.physical.begin &&
             again.physical.end == k.physical.end && again.alignment == k.alignment);
  if (mirrored) FUZZ_CHECK(is_physically_mirrored(again));
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    // Segments may come in another file order; match them by physical address (they are disjoint).
    const LoadSegment& s = k.segments[i];
    const LoadSegment* n = nullptr;
    for (uint32_t j = 0; j < again.segment_count; ++j)
      if (again.segments[j].paddr == s.paddr) n = &again.segments[j];
    // Same memory once both are padded with zeros to p_memsz: the compact layout turns trailing
    // zeros into bss, the mirrored one stores bss as zeros.
    FUZZ_CHECK(n && test::same_segment(input.elf, s, out.bytes, *n));
  }
  // The regions are the frames: in order, back to back, covering the whole file.
  uint64_t at = 0;
  for (Range r : out.regions) {
    FUZZ_CHECK(r.begin == at && r.end > r.begin);
    at = r.end;
  }
  FUZZ_CHECK(at == out.bytes.size());
  // Each code range is a region starting a read-only executable segment, inside it.
  for (Range c : out.code) {
    bool region = false, segment = false;
    for (Range r : out.regions) region |= r.begin == c.begin && r.end == c.end;
    for (uint32_t i = 0; i < again.segment_count; ++i) {
      const LoadSegment& s = again.segments[i];
      segment |= s.offset == c.begin && c.end <= s.offset + s.filesz && (s.flags & elf::kPfX) && !(s.flags & elf::kPfW);
    }
    FUZZ_CHECK(region && segment);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As the stub sees it: headers only, file length unknown.
  KernelHeaders headers_only;
  (void)parse_kernel_headers(data, size, ~0ull, &headers_only);

  // As the packer sees it: the whole file.
  KernelInput input;
  StubStatus status = parse_kernel_headers(data, size, size, &input.kernel);
  if (!status.ok()) {
    FUZZ_CHECK(status.message[0] != '\0');
    return 0;
  }
  check_accepted(input.kernel, size);
  input.elf.assign(data, data + size);
  PayloadElf stored = layout_compact(input);
  check_layout(input, stored, false);
  // A raw payload leaves long zero runs out; `kpack extract` joins its pieces back into the stored
  // layout (pieces are recognised by their 4 KiB p_align, which no input segment then has).
  PayloadElf left_out = layout_compact(input, InnerZeros::kLeftOut);
  FUZZ_CHECK(left_out.bytes.size() <= stored.bytes.size());
  FUZZ_CHECK(left_out.kernel.physical.begin == input.kernel.physical.begin &&
             left_out.kernel.physical.end == input.kernel.physical.end);
  FUZZ_CHECK(!is_physically_ordered(stored.kernel) || is_physically_ordered(left_out.kernel));
  bool page_aligned_input = false;
  for (uint32_t i = 0; i < input.kernel.segment_count; ++i)
    page_aligned_input |= input.kernel.segments[i].align == 4096;
  if (!page_aligned_input) FUZZ_CHECK(join_left_out_zeros(left_out.bytes, ~0ull) == stored.bytes);
  if (input.kernel.span() <= kMaxMirroredSpan)
    check_layout(input, layout_mirrored(input, align_up(input.kernel.headers_end, 4096)), true);
  return 0;
}
