// Which payloads this build of the engine meets. Each stub is built for one codec
// (stub/runtime/CMakeLists.txt defines KPACK_STUB_CODEC for frame_decoder.cc and unpack.cc): the
// code for every other codec is never reached there, and --gc-sections drops it with the library
// code it calls. The host engine (tests, fuzzers, kpack info) meets them all.
#pragma once

#include "formats/kpack_image.h"

namespace kpack {

constexpr bool engine_meets(Codec codec) {
#ifdef KPACK_STUB_CODEC
  return codec == Codec::KPACK_STUB_CODEC;
#else
  return static_cast<uint32_t>(codec) < kCodecCount;
#endif
}

}  // namespace kpack
