// fuzz_elf: the ELF parser shared by the stub and the packer, and the packer's two payload layouts
// on every ELF the parser accepts. A layout must produce an ELF that parses again, with the same
// segments at the same physical addresses holding the same bytes.
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "formats/elf64.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/self_test.h"
#include "stub/unpack/kernel_headers.h"
#include "packer/image/layout.h"
#include "tests/support/same_segment.h"
#include "tests/support/synthetic_kernel.h"

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

// A refusal says why.
void check_refused(const StubStatus& status) { FUZZ_CHECK(status.message[0] != '\0'); }

// A raw payload leaves long zero runs out of the stored layout; `kpack extract` joins its pieces
// back (pieces are recognised by their 4 KiB p_align, which no input segment then has).
void check_left_out(const KernelInput& input, const PayloadElf& stored, const PayloadElf& left_out) {
  FUZZ_CHECK(left_out.bytes.size() <= stored.bytes.size());
  FUZZ_CHECK(left_out.kernel.physical.begin == input.kernel.physical.begin &&
             left_out.kernel.physical.end == input.kernel.physical.end);
  FUZZ_CHECK(!is_physically_ordered(stored.kernel) || is_physically_ordered(left_out.kernel));
  bool page_aligned_input = false;
  for (uint32_t i = 0; i < input.kernel.segment_count; ++i)
    page_aligned_input |= input.kernel.segments[i].align == 4096;
  if (!page_aligned_input) FUZZ_CHECK(join_left_out_zeros(left_out.bytes, ~0ull) == stored.bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As the stub sees it: headers only, file length unknown.
  KernelHeaders headers_only;
  (void)parse_kernel_headers(data, size, ~0ull, &headers_only);

  // As the packer sees it: the whole file.
  KernelInput input;
  StubStatus status = parse_kernel_headers(data, size, size, &input.kernel);
  if (!status.ok()) return check_refused(status), 0;
  check_accepted(input.kernel, size);
  input.elf.assign(data, data + size);
  PayloadElf stored = layout_compact(input);
  check_layout(input, stored, false);
  check_left_out(input, stored, layout_compact(input, InnerZeros::kLeftOut));
  if (input.kernel.span() <= kMaxMirroredSpan)
    check_layout(input, layout_mirrored(input, align_up(input.kernel.headers_end, 4096)), true);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above on a synthetic kernel shaped like Debian's (three segments).
namespace {

KernelInput good_input() {
  KernelInput input;
  input.elf = test::make_kernel_elf(test::typical_segments());
  FUZZ_REQUIRE(parse_kernel_headers(input.elf.data(), input.elf.size(), input.elf.size(), &input.kernel).ok());
  return input;
}

void spoil_accepted(const std::function<void(KernelHeaders&, uint64_t&)>& spoil) {
  KernelInput input = good_input();
  uint64_t size = input.elf.size();
  spoil(input.kernel, size);
  check_accepted(input.kernel, size);
}

void spoil_layout(const std::function<void(KernelInput&, PayloadElf&)>& spoil, bool mirrored = false) {
  KernelInput input = good_input();
  PayloadElf out = layout_compact(input);
  spoil(input, out);
  check_layout(input, out, mirrored);
}

void spoil_left_out(const std::function<void(PayloadElf& stored, PayloadElf& left_out)>& spoil) {
  KernelInput input = good_input();
  PayloadElf stored = layout_compact(input), left_out = layout_compact(input, InnerZeros::kLeftOut);
  spoil(stored, left_out);
  check_left_out(input, stored, left_out);
}

}  // namespace

FUZZ_SPOIL("no segment") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.segment_count = 0; });
}
FUZZ_SPOIL("headers running into the first segment") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.headers_end = k.segments[0].offset + 1; });
}
FUZZ_SPOIL("an alignment not a power of two") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.alignment = 3 * kMinKernelAlignment; });
}
FUZZ_SPOIL("a kernel base off its alignment") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.physical.begin += 4096; });
}
FUZZ_SPOIL("an entry past the kernel") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.entry = k.physical.end; });
}
FUZZ_SPOIL("a segment with more file bytes than memory") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.segments[0].filesz = k.segments[0].memsz + 1; });
}
FUZZ_SPOIL("a segment past the end of the file") {
  spoil_accepted([](KernelHeaders& k, uint64_t& size) { size = k.segments[0].offset + k.segments[0].filesz - 1; });
}
FUZZ_SPOIL("a segment below 1 MiB") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.segments[0].paddr = 0; });
}
FUZZ_SPOIL("a segment outside the kernel's span") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.physical.end -= 1; });
}
FUZZ_SPOIL("two segments sharing file bytes") {
  spoil_accepted([](KernelHeaders& k, uint64_t&) { k.segments[1].offset = k.segments[0].offset; });
}
FUZZ_SPOIL("a rewritten ELF that does not parse") {
  spoil_layout([](KernelInput&, PayloadElf& out) { out.bytes.resize(16); });
}
FUZZ_SPOIL("a rewritten ELF with a segment less") {
  spoil_layout([](KernelInput& input, PayloadElf&) { --input.kernel.segment_count; });
}
FUZZ_SPOIL("a rewritten ELF with another entry") {
  spoil_layout([](KernelInput& input, PayloadElf&) { input.kernel.entry += 1; });
}
FUZZ_SPOIL("a mirrored layout that is not mirrored") {
  spoil_layout([](KernelInput&, PayloadElf&) {}, true);
}
FUZZ_SPOIL("a rewritten segment with one byte changed") {
  spoil_layout([](KernelInput& input, PayloadElf& out) {
    const LoadSegment& s = input.kernel.segments[0];
    for (uint32_t j = 0; j < out.kernel.segment_count; ++j)
      if (out.kernel.segments[j].paddr == s.paddr)
        out.bytes[out.kernel.segments[j].offset + out.kernel.segments[j].filesz - 1] ^= 1;
  });
}
FUZZ_SPOIL("regions that do not start at the file's start") {
  spoil_layout([](KernelInput&, PayloadElf& out) { out.regions.front().begin = 1; });
}
FUZZ_SPOIL("regions that stop before the file's end") {
  spoil_layout([](KernelInput&, PayloadElf& out) { out.regions.pop_back(); });
}
FUZZ_SPOIL("a code range that is no region") {
  spoil_layout([](KernelInput&, PayloadElf& out) { out.code.push_back(Range{0, 1}); });
}
FUZZ_SPOIL("a refusal without a reason") { check_refused(StubStatus{""}); }
FUZZ_SPOIL("a raw payload larger than the stored one") {
  spoil_left_out([](PayloadElf& stored, PayloadElf& left_out) { left_out.bytes.resize(stored.bytes.size() + 1); });
}
FUZZ_SPOIL("a raw payload whose kernel moved") {
  spoil_left_out([](PayloadElf&, PayloadElf& left_out) { left_out.kernel.physical.begin += 4096; });
}
FUZZ_SPOIL("a raw payload out of physical order") {
  spoil_left_out(
      [](PayloadElf&, PayloadElf& left_out) { std::swap(left_out.kernel.segments[0], left_out.kernel.segments[1]); });
}
FUZZ_SPOIL("a raw payload whose pieces join to other bytes") {
  spoil_left_out([](PayloadElf& stored, PayloadElf&) { stored.bytes.back() ^= 1; });
}
#endif
