// The initrd under EFI, found where the Linux EFI stub looks: first a LoadFile2 protocol on the
// LINUX_EFI_INITRD_MEDIA_GUID device path (systemd-boot, systemd-stub, GRUB, QEMU's -initrd
// under OVMF install one), else the command line's initrd= paths, read from the volume the image
// was loaded from and concatenated in order.
#include "stub/efi/efi_boot.h"
#include "stub/efi/efi_tpm.h"
#include "stub/options/command_line.h"

namespace kpack::efi {
namespace {

// The vendor media node and the end node: the device path the initrd's LoadFile2 sits on.
struct InitrdDevicePath {
  DevicePath vendor;
  Guid guid;
  DevicePath end;
};
static_assert(sizeof(InitrdDevicePath) == 24);

void set_ramdisk(boot::BootParams* params, uint64_t address, uint64_t size) {
  params->hdr.ramdisk_image = static_cast<uint32_t>(address);
  params->hdr.ramdisk_size = static_cast<uint32_t>(size);
  params->ext_ramdisk_image = static_cast<uint32_t>(address >> 32);
  params->ext_ramdisk_size = static_cast<uint32_t>(size >> 32);
}

// Below the header's initrd_addr_max when the firmware has room there, anywhere otherwise (the
// header says XLF_CAN_BE_LOADED_ABOVE_4G, and the kernel takes ext_ramdisk_image).
uint64_t allocate_initrd(const Firmware& fw, const boot::BootParams& params, uint64_t size) {
  uint64_t address = allocate_pages(fw, size, params.hdr.initrd_addr_max);
  return address ? address : allocate_pages(fw, size, ~0ull);
}

EfiStatus load_from_load_file2(const Firmware& fw, boot::BootParams* params) {
  InitrdDevicePath path{{4, 3, {20, 0}}, kLinuxInitrdMedia, {0x7F, 0xFF, {4, 0}}};
  void* remaining = &path;
  Handle handle = nullptr;
  if (failed(fw.boot->locate_device_path(&kLoadFile2Protocol, &remaining, &handle))) return kNotFound;
  void* interface = nullptr;
  EfiStatus status = fw.boot->handle_protocol(handle, &kLoadFile2Protocol, &interface);
  if (failed(status)) return status;
  // LoadFile2 takes the path past its handle's (here the end node), as the Linux stub passes it:
  // OVMF's QEMU loader answers the whole path with EFI_NOT_FOUND.
  auto* load_file = static_cast<LoadFile2*>(interface);
  uint64_t size = 0;
  status = load_file->load_file(load_file, remaining, false, &size, nullptr);
  if (status != kBufferTooSmall) return failed(status) ? status : kNotFound;  // an empty initrd is none
  uint64_t address = allocate_initrd(fw, *params, size);
  if (!address) return kOutOfResources;
  status = load_file->load_file(load_file, remaining, false, &size, reinterpret_cast<void*>(address));
  if (failed(status)) {
    fw.boot->free_pages(address, (size + 4095) / 4096);
    return status;
  }
  set_ramdisk(params, address, size);
  // Only this path is measured: 6.1's stub leaves an initrd= one out of PCR 9.
  if (size) measure_into_pcr9(fw, address, size, MeasuredData::kInitrd);
  return kSuccess;
}

// Calls visit(path, length) for each initrd= word of the command line, in order.
template <typename Visit>
EfiStatus for_each_initrd_path(const char* text, Visit visit) {
  if (!text) return kSuccess;
  namespace words = kpack::command_line;
  words::Bytes read{text};
  EfiStatus status = kSuccess;
  words::for_each_word(read, uint64_t{0}, ~uint64_t{0}, [&](const words::Word<uint64_t>& word) {
    if (!words::has_key(read, word, "initrd") || word.value_begin == word.value_end) return false;
    status = visit(text + word.value_begin, static_cast<size_t>(word.value_end - word.value_begin));
    return failed(status);
  });
  return status;
}

EfiStatus open_file(File* root, const char* path, size_t length, File** file) {
  char16_t name[256];
  if (length + 1 > sizeof(name) / sizeof(name[0])) return kInvalidParameter;
  for (size_t i = 0; i < length; ++i) name[i] = path[i] == '/' ? u'\\' : static_cast<char16_t>(path[i]);
  name[length] = 0;
  return root->open(root, file, name, kFileModeRead, 0);
}

EfiStatus file_size(File* file, uint64_t* size) {
  alignas(8) uint8_t info[512];
  uint64_t info_size = sizeof(info);
  EfiStatus status = file->get_info(file, &kFileInfo, &info_size, info);
  if (failed(status)) return status;
  *size = *reinterpret_cast<const uint64_t*>(info + kFileInfoFileSizeOffset);
  return kSuccess;
}

EfiStatus load_from_command_line(const Firmware& fw, void* device_handle, const char* command_line,
                                 boot::BootParams* params) {
  void* interface = nullptr;
  if (!device_handle || failed(fw.boot->handle_protocol(device_handle, &kSimpleFileSystemProtocol, &interface)))
    return kNotFound;
  File* root = nullptr;
  auto* volume = static_cast<SimpleFileSystem*>(interface);
  EfiStatus status = volume->open_volume(volume, &root);
  if (failed(status)) return status;
  // First the total size, then one allocation, then the files in order.
  uint64_t total = 0;
  uint32_t files = 0;
  status = for_each_initrd_path(command_line, [&](const char* path, size_t length) {
    File* file = nullptr;
    uint64_t size = 0;
    EfiStatus s = open_file(root, path, length, &file);
    if (!failed(s)) s = file_size(file, &size), file->close(file);
    total += size;
    ++files;
    return s;
  });
  if (failed(status) || !files || !total) {
    root->close(root);
    return failed(status) ? status : kNotFound;
  }
  uint64_t address = allocate_initrd(fw, *params, total);
  if (!address) {
    root->close(root);
    return kOutOfResources;
  }
  uint64_t at = address;
  status = for_each_initrd_path(command_line, [&](const char* path, size_t length) {
    File* file = nullptr;
    EfiStatus s = open_file(root, path, length, &file);
    if (failed(s)) return s;
    uint64_t size = address + total - at;
    s = file->read(file, &size, reinterpret_cast<void*>(at));
    file->close(file);
    at += size;
    return s;
  });
  root->close(root);
  if (failed(status)) {
    fw.boot->free_pages(address, (total + 4095) / 4096);
    return status;
  }
  set_ramdisk(params, address, at - address);
  return kSuccess;
}

}  // namespace

EfiStatus load_initrd(const Firmware& fw, void* device_handle, const char* command_line, boot::BootParams* params) {
  EfiStatus status = load_from_load_file2(fw, params);
  if (status != kNotFound) return status;
  return load_from_command_line(fw, device_handle, command_line, params);
}

}  // namespace kpack::efi
