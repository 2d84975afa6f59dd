#include "kernel_input.h"

#include <cstring>

#include "bzimage_reader.h"
#include "file_io.h"
#include "kernel_version.h"

namespace kpack {

Result<KernelHeaders> parse_vmlinux(const std::vector<uint8_t>& elf, const std::string& name) {
  KernelHeaders kernel;
  StubStatus status = parse_kernel_headers(elf.data(), elf.size(), elf.size(), &kernel);
  if (!status.ok()) return error_in(name, status.message);
  return kernel;
}

Result<KernelInput> kernel_input_from_elf(std::vector<uint8_t> elf, const std::string& name) {
  Result<KernelHeaders> kernel = parse_vmlinux(elf, name);
  if (!kernel) return kernel.error();
  KernelInput input;
  input.elf = std::move(elf);
  input.kernel = *kernel;
  return input;
}

Result<KernelInput> load_kernel(const std::string& path) {
  Result<std::vector<uint8_t>> file = read_file(path);
  if (!file) return file.error();
  if (file->empty()) return error_in(path, "empty file");
  if (!looks_like_bzimage(*file)) {
    Result<KernelInput> input = kernel_input_from_elf(std::move(*file), path);
    if (input) input->version = version_from_banner(input->elf);
    return input;
  }

  Result<BzImage> image = read_bzimage(*file, path);
  if (!image) return image.error();
  Result<KernelPayload> payload = extract_kernel(*image, *file, path);
  if (!payload) return payload.error();
  Result<KernelInput> input = kernel_input_from_elf(std::move(payload->elf), path);
  if (!input) return input;
  input->relocs = std::move(payload->relocs);
  input->cmdline_size = image->header.cmdline_size;
  input->version = version_from_bzimage(*file, image->header, image->setup_size);
  if (!input->version) input->version = version_from_banner(input->elf);
  return input;
}

}  // namespace kpack
