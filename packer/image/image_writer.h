// Assembles a kpack image: the real-mode setup sectors with a complete setup header, the stub, the
// PackerRecord and kernel_info records, and the payload. The protected-mode part (all but the setup
// sectors) is a pass of its own, which the ELF output (elf_writer.h) carries as it is.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "packer/codecs/codecs.h"
#include "packer/input/kernel_input.h"
#include "packer/base/result.h"

namespace kpack {

// QEMU, and most loaders for a relocatable image, put the protected-mode part here.
inline constexpr uint64_t kDefaultLoadAddress = boot::kDefaultCode32Start;

// Where a raw image keeps the kernel's segments (doc/image-format.md). In place: at file offsets
// that mirror their physical addresses, the first one 15 MiB into the protected-mode part, so that
// a loader putting that part at 1 MiB (QEMU -kernel, whatever pref_address says) leaves every
// segment where it runs and the stub moves nothing (it zeroes the bss); the zeros before and
// between them cost the file (sparse on disk; the PE view leaves the 15 MiB out). Compact: one
// after another without those zeros, for firmware that reads every byte of the file (UEFI); the
// stub moves the kernel unless the loader honours pref_address. In place after the stub (kpack
// --elf, never --layout): mirrored as in place, the bss stored too, but the first segment on the
// page after the payload's ELF headers, so that the ELF's PT_LOAD, whose address puts it on the
// kernel's floor, holds no zeros before the kernel; the stub moves and zeroes nothing.
enum class RawLayout { kInPlace, kCompact, kInPlaceAfterStub };

struct PackOptions {
  CompressOptions compress;
  RawLayout raw_layout = RawLayout::kInPlace;
  // The lowest physical address the kernel may run at. By default the kernel's own link address
  // (CONFIG_PHYSICAL_START, 16 MiB on Debian), the floor the stock decompressor keeps: below it
  // lies ZONE_DMA (see doc/kaslr.md).
  std::optional<uint64_t> kernel_address;
  // Raw images: move the kernel to a random physical slot at boot (one copy of it); compressed
  // images always draw one unless the command line says nokaslr.
  bool randomize_raw_physically = false;
  // The contents of a .sbat section (shim's revocation metadata); empty: no section.
  std::vector<uint8_t> sbat;
  // Called after each compressed frame with the ELF bytes done so far and in all (for a progress
  // line); may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct ImageBlobs {
  std::span<const uint8_t> setup;  // real-mode setup sectors, header area zeroed
  std::span<const uint8_t> stub;   // protected-mode stub, ends where PackerRecord goes
};

// The blobs built into this kpack binary: the setup, and the stub with `codec`'s decoder.
ImageBlobs built_in_blobs(Codec codec);

// The lowest physical address the kernel may run at: --kernel-address, else its link address.
uint64_t kernel_floor(const KernelInput& input, const PackOptions& options);

// What the stub needs loaded, contiguously, at any 4 KiB-aligned address: the stub, its record,
// kernel_info, the frame table and the payload.
struct ProtectedPart {
  std::vector<uint8_t> bytes;         // the record's image_size bytes
  StubLayout stub;                    // the stub's layout block
  uint64_t packer_record_offset = 0;  // the PackerRecord; kernel_info follows it
  uint64_t kernel_info_offset = 0;
  uint64_t payload_offset = 0;
  uint64_t payload_size = 0;
  uint64_t init_size = 0;  // how far from the image's base the stub may write (the header's init_size)
  // Bytes once loaded: a raw image's run on through the kernel's bss, which the file leaves out
  // (init_size); a compressed image's are its file bytes.
  uint64_t memory_size = 0;
  uint64_t pref_address = kDefaultLoadAddress;  // raw: where the first segment lands on the kernel's floor
  uint64_t kernel_offset = 0;                   // raw: the first kernel segment's offset in the part (else 0)
  Range hole;  // in-place raw: the zeros before the kernel, in no PE section (from the part's start)
};

// Errors name the context's output, or its input when the kernel is at fault.
Result<ProtectedPart> build_protected_part(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                           const ImageBlobs& blobs);

// The bzImage: setup sectors, then the protected-mode part.
Result<std::vector<uint8_t>> build_image(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                         const ImageBlobs& blobs);

}  // namespace kpack
