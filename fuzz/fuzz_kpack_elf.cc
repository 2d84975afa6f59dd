// fuzz_kpack_elf: kpack's ELF output read back as `kpack info`, `kpack extract` and repacking read
// it — the ELF header and program headers, the notes (Xen's PVH entry, kpack's record offset), the
// stub's layout block against e_entry and the note, the kpack record, the payload's decoders, and
// the placement report at p_paddr (the stub's engine on a simulated machine). Any input that is
// not an ELF file goes nowhere: fuzz_bzimage has those.
#include <cstdio>
#include <span>
#include <string>

#include "formats/boot_params.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_packer_checks.h"
#include "packer/input/elf_reader.h"
#include "packer/read/info.h"

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

// extract_kernel as `kpack extract` and repacking call it: the ELF it splits off is exactly its extent.
void check_extract(const KpackElf& elf, std::span<const uint8_t> file) {
  Result<KernelPayload> payload = extract_kernel(elf.payload, {file, kName}, kMaxDecoded);
  if (!payload) return check_message(payload.error());
  Result<uint64_t> extent = elf_file_extent({payload->elf, kName});
  FUZZ_CHECK(extent.ok() && *extent == payload->elf.size());
  FUZZ_CHECK(payload->elf.size() + payload->relocation_table.size() <= kMaxDecoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> file(data, size);
  if (!looks_like_elf(file)) return 0;
  (void)looks_like_kpack_elf(file);  // repacking's question, asked of every ELF input
  Result<KpackElf> elf = read_kpack_elf({file, kName});
  if (!elf) return check_message(elf.error()), 0;
  check_accepted(*elf, file);
  check_extract(*elf, file);
  check_info(file, kName, kLimits);
  return 0;
}
