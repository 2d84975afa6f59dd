// The seed generator packs images with the packer's own code but never boots them, so zero-filled
// blobs of the right shape stand in for the stub: two sectors of setup, and a one-page "stub"
// holding only the layout block the packer reads (formats/kpack_image.h), after which the PackerRecord
// record goes.
#include <cstring>

#include "packer/image/image_writer.h"

namespace kpack {

ImageBlobs built_in_blobs(Codec) {
  static const uint8_t setup[1024] = {};
  alignas(16) static uint8_t stub[4096] = {};
  StubLayout layout{};
  std::memcpy(layout.magic, kStubLayoutMagic, sizeof(layout.magic));
  layout.rodata_start = layout.data_start = sizeof(stub);
  layout.efi_entry = layout.handover_entry = 0x200;
  layout.pvh_entry = 0x100;  // kpack --elf refuses a stub without one
  std::memcpy(stub + kStubLayoutOffset, &layout, sizeof(layout));
  return ImageBlobs{setup, stub};
}

}  // namespace kpack
