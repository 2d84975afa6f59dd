// The payload's frame table (FrameEntry, formats/kpack_image.h): checked before any frame is
// decoded, then used to send each frame straight to its destination and verify it there. Frames
// are independent, so they may be decoded in any order and on any CPU.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "stub/unpack/frame_decoder.h"
#include "stub/unpack/kernel_headers.h"
#include "stub/base/status.h"

namespace kpack {

// The frames cover [0, payload_size) of the payload and, in order, the ELF file from offset 0, then
// (with `relocations_size`) one last frame holding exactly the relocation table, uncoded. No frame
// is empty, none is larger than kMaxFrameSize or has an unknown coding, and there are at most
// kMaxFrames.
inline constexpr uint64_t kMaxFrameSize = 1ull << 30;
StubStatus check_frame_table(const FrameEntry* frames, uint32_t count, uint64_t payload_size,
                             uint64_t relocations_size);

// Where frame `f`'s bytes belong once the kernel is placed at `base`: an offset into the kernel's
// physical range, or kNotKept for bytes between segments (they are never decoded). A frame that
// straddles a segment's edge, or ends past the last segment, is an error.
inline constexpr uint64_t kNotKept = ~0ull;
StubStatus frame_target(const KernelHeaders& kernel, const FrameEntry& f, uint64_t* kernel_offset);

// Frames 1 .. count - 1 (frame 0, the ELF headers, is decoded first, alone) into order[0, count - 1),
// the costliest first, as the CPUs should take them: a large frame taken last keeps one CPU decoding
// while the others have finished. A frame's cost is its compressed bytes (the lower index first at
// equal cost), which ranks 6.18's zstd frames by their decode time but for one of nine.
void order_by_cost(const FrameEntry* frames, uint32_t count, uint32_t* order);

// Decodes frame `index` into dst[0, f.size) and proves it: exactly f.size bytes from exactly
// f.payload_size, and the digest the record names over its compressed bytes, taken right after the
// decode; then its coding is undone in place. A damaged frame writes only inside dst[0, f.size),
// and its digest mismatch is reported ahead of whatever the decoder made of it.
StubStatus decode_frame(FrameDecoder& decoder, const uint8_t* payload, const FrameEntry& f, uint32_t index,
                        FrameDigest digest, uint8_t* dst);

}  // namespace kpack
