// The firmware's graphics framebuffer (GOP) as screen_info, as the Linux EFI stub describes it,
// so efifb/simpledrm keep drawing where the firmware did.
#include "stub/efi/efi_boot.h"

namespace kpack::efi {
namespace {

// A contiguous mask's bit position and width.
void mask_to_field(uint32_t mask, uint8_t* position, uint8_t* size) {
  uint8_t pos = 0, len = 0;
  if (mask) {
    while (!(mask & 1)) mask >>= 1, ++pos;
    while (mask & 1) mask >>= 1, ++len;
  }
  *position = pos;
  *size = len;
}

}  // namespace

void store_framebuffer(const Firmware& fw, boot::ScreenInfo* screen) {
  auto* output = locate_protocol<GraphicsOutput, kGraphicsOutputProtocol>(fw);
  if (!output) return;
  GraphicsMode* mode = output->mode;
  if (!mode || !mode->info || mode->info->pixel_format == kPixelBltOnly) return;
  const GraphicsModeInfo& info = *mode->info;
  PixelBitmask mask = info.pixel_information;
  if (info.pixel_format == kPixelRgbx8) mask = {0x000000FF, 0x0000FF00, 0x00FF0000, 0xFF000000};
  if (info.pixel_format == kPixelBgrx8) mask = {0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000};
  uint32_t all = mask.red | mask.green | mask.blue | mask.reserved;
  uint16_t depth = 0;
  while (depth < 32 && (all >> depth)) ++depth;

  screen->orig_video_isVGA = boot::kVideoTypeEfi;
  screen->lfb_width = static_cast<uint16_t>(info.horizontal_resolution);
  screen->lfb_height = static_cast<uint16_t>(info.vertical_resolution);
  screen->lfb_depth = depth;
  screen->lfb_linelength = static_cast<uint16_t>(info.pixels_per_scan_line * ((depth + 7) / 8));
  screen->lfb_base = static_cast<uint32_t>(mode->frame_buffer_base);
  screen->ext_lfb_base = static_cast<uint32_t>(mode->frame_buffer_base >> 32);
  screen->lfb_size = static_cast<uint32_t>(mode->frame_buffer_size);
  screen->pages = 1;  // one framebuffer page, as the Linux EFI stub reports it to the fbdev drivers
  uint32_t capabilities = boot::kVideoCapabilitySkipQuirks;
  if (mode->frame_buffer_base >> 32) capabilities |= boot::kVideoCapability64BitBase;
  screen->capabilities = capabilities;
  mask_to_field(mask.red, &screen->red_pos, &screen->red_size);
  mask_to_field(mask.green, &screen->green_pos, &screen->green_size);
  mask_to_field(mask.blue, &screen->blue_pos, &screen->blue_size);
  mask_to_field(mask.reserved, &screen->rsvd_pos, &screen->rsvd_size);
}

}  // namespace kpack::efi
