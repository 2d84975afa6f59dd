// liblzma's CRC64, kept out of the xz stub. The packer writes every xz stream with a CRC32 check
// and FrameDecoder::decode_xz refuses any other check before liblzma reads the stream, so
// liblzma's check code never asks for a CRC64. Defining the symbol here keeps the archive's member
// out of the image: its 8 KiB table, its CLMUL code and the constructor that chooses between them
// (three pages of the xz stub, which must stay no larger than stock's xz image).
#include <stddef.h>
#include <stdint.h>

#include "stub/arch/halt.h"

extern "C" uint64_t lzma_crc64(const uint8_t*, size_t, uint64_t) {
  kpack::halt_with(kpack::fail("xz: a CRC64 check reached the stub, which refuses it before decoding"));
}
