// fuzz_kpack_elf: kpack's ELF output read back as `kpack info`, `kpack extract` and repacking read
// it — the ELF header and program headers, the notes (Xen's PVH entry, kpack's record offset), the
// stub's layout block against e_entry and the note, the kpack record, the payload's decoders, and
// the placement report at p_paddr (the stub's engine on a simulated machine). Any input that is
// not an ELF file goes nowhere: fuzz_bzimage has those.
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "formats/boot_params.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_packer_checks.h"
#include "fuzz/self_test.h"
#include "packer/image/elf_writer.h"
#include "packer/input/elf_reader.h"
#include "packer/input/kernel_input.h"
#include "packer/read/info.h"
#include "tests/support/synthetic_kernel.h"

using namespace kpack;

namespace {

// As fuzz_bzimage: payloads bounded to 4 MiB decoded, a 32 MiB simulated machine.
constexpr uint64_t kMaxDecoded = 4 << 20;
constexpr InfoLimits kLimits{kMaxDecoded, 32 << 20};
const std::string kName = "fuzz.elf";

// Every error is one line that starts with the file's name.
void check_message(const Error& error) { kpack::check_message(error, kName); }

// What the reader promises of an ELF it accepts: the PT_LOAD lies in the file at a page-aligned
// physical address below 4 GiB, the entries are the stub's, and the payload lies inside the PT_LOAD.
void check_accepted(const KpackElf& elf, std::span<const uint8_t> file) {
  const elf::Phdr& load = elf.load;
  FUZZ_CHECK(load.filesz > 0 && load.filesz <= load.memsz);
  FUZZ_CHECK(load.offset <= file.size() && load.filesz <= file.size() - load.offset);
  FUZZ_CHECK(load.paddr == load.vaddr && load.paddr % 4096 == 0);
  FUZZ_CHECK(load.paddr + load.memsz <= (1ull << 32));
  FUZZ_CHECK(elf.ehdr.entry == load.paddr + boot::kEntry64Offset);
  FUZZ_CHECK(elf.pvh_entry == load.paddr + elf.stub.pvh_entry);
  FUZZ_CHECK(elf.notes >= 2);
  const PackedPayload& payload = elf.payload;
  FUZZ_CHECK(payload.packer_record.has_value());
  FUZZ_CHECK(payload.protected_offset == load.offset);
  FUZZ_CHECK(payload.payload_offset >= load.offset && payload.payload_size > 0);
  FUZZ_CHECK(payload.payload_offset - load.offset <= load.filesz &&
             payload.payload_size <= load.filesz - (payload.payload_offset - load.offset));
  FUZZ_CHECK(looks_like_kpack_elf(file));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> file(data, size);
  if (!looks_like_elf(file)) return 0;
  (void)looks_like_kpack_elf(file);  // repacking's question, asked of every ELF input
  Result<KpackElf> elf = read_kpack_elf({file, kName});
  if (!elf) return check_message(elf.error()), 0;
  check_accepted(*elf, file);
  check_split(extract_kernel(elf->payload, {file, kName}, kMaxDecoded), kName, kMaxDecoded);
  check_info(file, kName, kLimits);
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant of check_accepted on a raw `kpack --elf` image of a synthetic kernel
// (packed with the stand-in stub of no_stub_blobs.cc).
namespace {

struct Packed {
  std::vector<uint8_t> file;
  KpackElf elf;
};

Packed good_elf() {
  Result<KernelInput> input = kernel_input_from_elf(test::make_kernel_elf(test::typical_segments()), "vmlinux");
  FUZZ_REQUIRE(input.ok());
  PackOptions options;
  options.compress = {Codec::kRaw, 0, 1};
  Result<ElfImage> image = build_elf_image(Context{.output = kName}, *input, options, built_in_blobs(Codec::kRaw));
  FUZZ_REQUIRE(image.ok());
  Packed packed{std::move(image->bytes), {}};
  Result<KpackElf> read = read_kpack_elf({packed.file, kName});
  FUZZ_REQUIRE(read.ok());
  packed.elf = *read;
  return packed;
}

void spoil_accepted(const std::function<void(KpackElf&, std::vector<uint8_t>&)>& spoil) {
  Packed packed = good_elf();
  spoil(packed.elf, packed.file);
  check_accepted(packed.elf, packed.file);
}

}  // namespace

FUZZ_SPOIL("a PT_LOAD without file bytes") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.load.filesz = 0; });
}
FUZZ_SPOIL("a PT_LOAD past the end of the file") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>& file) { elf.load.offset = file.size(); });
}
FUZZ_SPOIL("a PT_LOAD whose virtual address is not its physical one") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.load.vaddr = elf.load.vaddr + 4096; });
}
FUZZ_SPOIL("a PT_LOAD ending past 4 GiB") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.load.paddr = elf.load.vaddr = 0xFFFFF000; });
}
FUZZ_SPOIL("an e_entry that is not the stub's 64-bit entry") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.ehdr.entry = elf.ehdr.entry + 1; });
}
FUZZ_SPOIL("a PVH entry that is not the stub's") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.pvh_entry += 1; });
}
FUZZ_SPOIL("a single note") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.notes = 1; });
}
FUZZ_SPOIL("no kpack record") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.payload.packer_record.reset(); });
}
FUZZ_SPOIL("a protected-mode part elsewhere than the PT_LOAD") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.payload.protected_offset += 1; });
}
FUZZ_SPOIL("an empty payload") {
  spoil_accepted([](KpackElf& elf, std::vector<uint8_t>&) { elf.payload.payload_size = 0; });
}
FUZZ_SPOIL("a payload past the PT_LOAD") {
  spoil_accepted(
      [](KpackElf& elf, std::vector<uint8_t>&) { elf.payload.payload_offset = elf.load.offset + elf.load.filesz + 1; });
}
FUZZ_SPOIL("an image repacking would not take for kpack's") {
  spoil_accepted([](KpackElf&, std::vector<uint8_t>& file) { file[0] ^= 1; });
}
#endif
