// What the packer tells the stub: a small record appended right after the stub's code in the
// protected-mode part, immediately followed by kernel_info. The stub finds it through its own end
// symbol, so it does not depend on a loader copying any setup-header field into boot_params; host
// tools find it through the header's kernel_info_offset.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack {

enum class Codec : uint32_t { kRaw = 0, kGzip = 1, kLz4 = 2, kZstd = 3, kXz = 4 };
inline constexpr uint32_t kCodecCount = 5;

inline constexpr const char* codec_name(Codec codec) {
  switch (codec) {
    case Codec::kRaw: return "raw";
    case Codec::kGzip: return "gzip";
    case Codec::kLz4: return "lz4";
    case Codec::kZstd: return "zstd";
    case Codec::kXz: return "xz";
  }
  return "unknown";
}

inline constexpr uint8_t kPackerRecordMagic[8] = {'k', 'p', 'a', 'c', 'k', 'I', 'N', 'F'};
inline constexpr uint32_t kPackerRecordVersion = 5;  // 5: frames say their coding (FrameEntry::coding)
// The stub blob is padded to this, and the PackerRecord starts right after it.
inline constexpr uint32_t kPackerRecordAlign = 16;

// PackerRecord::flags
inline constexpr uint32_t kRecordRandomizeRawPhysically = 1 << 0;  // raw: move to a random slot (a copy)
// The kernel runs with 5-level paging when the CPU has it (CONFIG_X86_5LEVEL): the stub hands it over
// with CR4.LA57 on unless the command line says no5lvl, as the stock decompressor does.
inline constexpr uint32_t kRecordKernelFiveLevel = 1 << 1;
// The kernel accepts memory itself (CONFIG_UNACCEPTED_MEMORY, 6.5+): the EFI entry tells the firmware
// to leave unaccepted memory unaccepted and hands it over as the Linux EFI stub does. Without the
// bit (every image before it too) the firmware accepts it all at ExitBootServices.
inline constexpr uint32_t kRecordKernelAcceptsMemory = 1 << 2;
// The relocation table's frame holds it coded (code_relocation_planes, formats/relocation_table.h):
// set on every compressed image since the coding, never on a raw one, whose table is not decoded.
inline constexpr uint32_t kRecordRelocationPlanes = 1 << 3;
inline constexpr uint32_t kRecordKnownFlags =
    kRecordRandomizeRawPhysically | kRecordKernelFiveLevel | kRecordKernelAcceptsMemory | kRecordRelocationPlanes;
static_assert((kRecordRandomizeRawPhysically & kRecordKernelFiveLevel) == 0 && kRecordKnownFlags == 0xf);

// What proves a frame right (PackerRecord::digest).
enum class FrameDigest : uint32_t {
  kNone = 0,        // raw payloads: the loader's bytes are used as they are
  kFrameCheck = 1,  // the format's own check, computed by its decoder anyway (gzip CRC32, xz CRC32)
  kXxh3 = 2,        // FrameEntry::digest, XXH3-64 of the frame's compressed bytes, checked right after its decode
};

// The digest each codec's frames are written with: XXH3 where the format's own check is optional
// and slower (LZ4's XXH32, zstd's XXH64), the format's check where its decoder computes it anyway.
// XXH3 hashes the compressed bytes, not the decoded ones: fewer bytes, hashed right
// after the decoder has pulled them into cache (a damaged frame writes only its own place). The
// decoder is deterministic, so proven input decodes to the kernel the packer cut; the frame table
// itself is proven by check_frame_table and the exact sizes every decode must meet.
constexpr FrameDigest digest_for(Codec codec) {
  switch (codec) {
    case Codec::kLz4:
    case Codec::kZstd: return FrameDigest::kXxh3;
    case Codec::kGzip:
    case Codec::kXz: return FrameDigest::kFrameCheck;
    case Codec::kRaw: return FrameDigest::kNone;
  }
  return FrameDigest::kNone;
}

struct PackerRecord {
  uint8_t magic[8];
  ul32 version;
  ul32 codec;               // Codec
  ul64 payload_offset;      // from the start of the protected-mode part
  ul64 payload_size;        // bytes of the (compressed) payload
  ul64 image_size;          // bytes of the protected-mode part
  ul64 min_kernel_address;  // lowest physical address the kernel may run at
  ul64 kernel_alignment;    // physical alignment of the kernel's lowest segment
  ul64 relocations_size;    // bytes of the kernel's relocation table after the ELF (0: none)
  ul32 flags;
  ul32 digest;              // FrameDigest
  ul64 frame_table_offset;  // FrameEntry[frame_count], from the start of the protected-mode part
  ul32 frame_count;         // 0 for raw payloads
  // The kernel's .bss and .brk sections, which it clears itself (clear_bss) before reading them:
  // the stub leaves them as they are, even where the packer turned them into a tail to zero. In
  // 4 KiB pages from the kernel's lowest physical address; 0 pages: zero every tail.
  ul16 bss_page;
  ul16 bss_pages;
};
static_assert(sizeof(PackerRecord) == 88);
static_assert(offsetof(PackerRecord, version) == 8);
static_assert(offsetof(PackerRecord, codec) == 12);
static_assert(offsetof(PackerRecord, payload_offset) == 16);
static_assert(offsetof(PackerRecord, payload_size) == 24);
static_assert(offsetof(PackerRecord, image_size) == 32);
static_assert(offsetof(PackerRecord, min_kernel_address) == 40);
static_assert(offsetof(PackerRecord, kernel_alignment) == 48);
static_assert(offsetof(PackerRecord, relocations_size) == 56);
static_assert(offsetof(PackerRecord, flags) == 64);
static_assert(offsetof(PackerRecord, digest) == 68);
static_assert(offsetof(PackerRecord, frame_table_offset) == 72);
static_assert(offsetof(PackerRecord, frame_count) == 80);
static_assert(offsetof(PackerRecord, bss_page) == 84);
static_assert(offsetof(PackerRecord, bss_pages) == 86);

// One frame of a compressed payload. The frames cover the payload and the payload's ELF file (then
// the relocation table) contiguously and in order, so any frame can be decoded on its own, on any
// CPU, straight to where its bytes belong. The first holds the ELF headers; a frame never
// straddles a segment's file bytes.
enum class FrameCoding : uint64_t {
  kNone = 0,
  // x86 call and jump targets made absolute (formats/call_targets.h), undone in place after the
  // decode: frames of machine code, in the codecs that have no such filter of their own.
  kCallTargets = 1,
};
inline constexpr uint64_t kFrameCodingCount = 2;

struct FrameEntry {
  ul64 payload_offset;  // from the start of the payload
  ul64 payload_size;    // compressed bytes
  ul64 file_offset;     // where the decoded bytes start in the ELF file (the relocation table: its end)
  ul64 size;            // decoded bytes
  ul64 digest;          // XXH3-64 of the compressed bytes when PackerRecord::digest says so, else 0
  ul64 coding;          // FrameCoding: what the packer did to the bytes before compressing them
};
static_assert(sizeof(FrameEntry) == 48);
static_assert(offsetof(FrameEntry, payload_size) == 8);
static_assert(offsetof(FrameEntry, file_offset) == 16);
static_assert(offsetof(FrameEntry, size) == 24);
static_assert(offsetof(FrameEntry, digest) == 32);
static_assert(offsetof(FrameEntry, coding) == 40);
inline constexpr uint32_t kMaxFrames = 65536;

// Where the record sits in the protected-mode part of a kpack image, given the setup header's
// kernel_info_offset (kernel_info follows the record).
constexpr uint64_t packer_record_offset(uint64_t kernel_info_offset) {
  return kernel_info_offset - sizeof(PackerRecord);
}

}  // namespace kpack

namespace kpack {

// Where the stub's parts begin, for the PE sections the packer describes (page-aligned offsets
// from the start of the protected-mode part), its two EFI entry points and its PVH entry. The linker script
// computes the values; the block sits at a fixed offset inside the 32-bit entry's space.
inline constexpr uint8_t kStubLayoutMagic[8] = {'k', 'p', 'a', 'c', 'k', 'L', 'A', 'Y'};
inline constexpr uint32_t kStubLayoutOffset = 0x1C0;
struct StubLayout {
  uint8_t magic[8];
  ul32 rodata_start;    // read-only data: end of the code
  ul32 data_start;      // writable data, the stack and the page tables, up to the record
  ul32 efi_entry;       // the PE entry point: efi_status entry(handle, system_table), MS ABI
  ul32 handover_entry;  // the EFI handover entry (64-bit): entry(handle, system_table, boot_params)
  ul32 pvh_entry;       // the PVH entry (32-bit, paging off, EBX = hvm_start_info): an ELF image's note
};
static_assert(sizeof(StubLayout) == 28);
static_assert(offsetof(StubLayout, rodata_start) == 8);
static_assert(offsetof(StubLayout, data_start) == 12);
static_assert(offsetof(StubLayout, efi_entry) == 16);
static_assert(offsetof(StubLayout, handover_entry) == 20);
static_assert(offsetof(StubLayout, pvh_entry) == 24);
static_assert(kStubLayoutOffset + sizeof(StubLayout) <= 0x200, "the 64-bit entry is at 0x200");

}  // namespace kpack
