// zstd's legacy decoders (formats v0.5-v0.7, before zstd 1.0), kept out of the zstd stub. Debian
// builds libzstd with them, and zstd_decompress.o, one section, names them from
// ZSTD_decompressDCtx, ZSTD_findFrameCompressedSize and ZSTD_decompressStream. The stub calls none
// of those: FrameDecoder::decode_zstd refuses anything but a zstd 1.x frame header, then decodes
// through ZSTD_decompressBegin and ZSTD_decompressContinue, which know no legacy format. Defining
// the names here keeps the archive's zstd_v05.o, zstd_v06.o and zstd_v07.o out of the image: 75 KiB
// of code, and of parsers for formats no kpack image holds.
#include "stub/arch/halt.h"

#define KPACK_ZSTD_LEGACY_REFUSED(name) \
  extern "C" [[noreturn]] void name() { kpack::halt_with(kpack::fail("zstd: the stub reached " #name)); }

#define KPACK_ZSTD_LEGACY_VERSION(v)                             \
  KPACK_ZSTD_LEGACY_REFUSED(ZBUFF##v##_createDCtx)               \
  KPACK_ZSTD_LEGACY_REFUSED(ZBUFF##v##_decompressContinue)       \
  KPACK_ZSTD_LEGACY_REFUSED(ZBUFF##v##_decompressInitDictionary) \
  KPACK_ZSTD_LEGACY_REFUSED(ZBUFF##v##_freeDCtx)                 \
  KPACK_ZSTD_LEGACY_REFUSED(ZSTD##v##_createDCtx)                \
  KPACK_ZSTD_LEGACY_REFUSED(ZSTD##v##_decompress_usingDict)      \
  KPACK_ZSTD_LEGACY_REFUSED(ZSTD##v##_findFrameSizeInfoLegacy)   \
  KPACK_ZSTD_LEGACY_REFUSED(ZSTD##v##_freeDCtx)                  \
  KPACK_ZSTD_LEGACY_REFUSED(ZSTD##v##_getFrameParams)

KPACK_ZSTD_LEGACY_VERSION(v05)
KPACK_ZSTD_LEGACY_VERSION(v06)
KPACK_ZSTD_LEGACY_VERSION(v07)
