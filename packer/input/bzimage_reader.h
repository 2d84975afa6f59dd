// Reads any x86 boot-protocol image: stock bzImages (including the PE/COFF-signed ones distributions
// ship) and kpack images. Finds the payload, decodes it, and splits it into the vmlinux ELF and the
// relocation table that follows it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "packer/codecs/codecs.h"
#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

// Where an image keeps its protected-mode part and payload: what extract_kernel and the placement
// report read, from a bzImage (read_bzimage) or a kpack ELF (elf_reader.h).
struct PackedPayload {
  uint64_t protected_offset = 0;  // file offset of the protected-mode part
  uint64_t payload_offset = 0;    // from the start of the file
  uint64_t payload_size = 0;
  StreamFormat format = StreamFormat::kRaw;
  std::optional<PackerRecord> packer_record;  // present when the image was written by kpack, and checked
  uint64_t packer_record_offset = 0;          // where that record sits in the protected-mode part
};

struct BzImage : PackedPayload {
  boot::SetupHeader header;  // as found at 0x1F1
  uint64_t setup_size = 0;   // bytes of the real-mode part: (setup_sects + 1) * 512 (= protected_offset)
};

// True when `file` has the boot-protocol signature ("HdrS" at 0x202), whatever else it is.
bool looks_like_bzimage(std::span<const uint8_t> file);

// Validates the header and locates the payload.
Result<BzImage> read_bzimage(const FileView& file);

// The kpack record at `at` in `protected_part` of `file` (its magic already seen), checked exactly as
// the stub checks it, and against the part's size. `file_offset` is the part's offset in the file,
// for messages.
Result<PackerRecord> read_packer_record(const FileView& file, std::span<const uint8_t> protected_part, uint64_t at,
                                        uint64_t file_offset);

struct KernelPayload {
  std::vector<uint8_t> elf;               // the vmlinux ELF, byte for byte as stored in the payload
  std::vector<uint8_t> relocation_table;  // the relocation table after it (may be empty)
};

// Decodes the payload and splits it at the end of the ELF file (the furthest of its headers,
// program headers, section headers and section contents). `max_output` bounds the decoded size
// (see decode_stream); fuzzers lower it to keep each run fast.
Result<KernelPayload> extract_kernel(const PackedPayload& image, const FileView& file,
                                     uint64_t max_output = kMaxDecodedBytes);

// Bytes of `elf` that belong to the ELF file proper; an error when the headers are inconsistent.
Result<uint64_t> elf_file_extent(const FileView& elf);

}  // namespace kpack
