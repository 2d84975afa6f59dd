#include "packer/kernel_input.h"

#include <cstring>

#include "packer/bzimage_reader.h"
#include "packer/file_io.h"
#include "packer/kernel_version.h"
#include "packer/pe_image.h"
#include "packer/relocs_from_elf.h"

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

namespace {

// Sets input.relocs by the precedence load_kernel documents.
Status choose_relocs(KernelInput& input, const std::string& path, const std::string& relocs_path) {
  if (!relocs_path.empty()) {
    std::optional<RelocsFormat> expected = relocs_format_of_kernel(input.elf);
    Result<std::vector<uint8_t>> bytes = read_file(relocs_path);
    if (!bytes) return bytes.error();
    Result<RelocTable> table = parse_relocs(*bytes, relocs_path);
    if (!table) return table.error();
    if (expected && table->format != *expected)
      return error_in(relocs_path, std::string("relocation table is ") + relocs_format_name(table->format) + " but " +
                                       path + " expects one " + relocs_format_name(*expected));
    input.relocs = std::move(*bytes);
    input.relocs_origin = RelocsOrigin::kFile;
    return Ok{};
  }
  if (!input.relocs.empty()) {
    input.relocs_origin = RelocsOrigin::kStockImage;
    return Ok{};
  }
  // Without a banner the format is unknown: compute anyway, to tell "no .rela sections" apart.
  std::optional<RelocsFormat> expected = relocs_format_of_kernel(input.elf);
  Result<std::optional<RelocTable>> table =
      relocs_from_elf(input.elf, expected.value_or(RelocsFormat::kWithoutInverse32), path);
  if (!table) return table.error();
  if (!*table) return Ok{};
  if (!expected)
    return error_in(path, "has .rela sections but no 'Linux version' banner to tell which relocation table "
                          "format it expects (give one with --relocs FILE)");
  input.relocs = encode_relocs(**table);
  input.relocs_origin = RelocsOrigin::kComputed;
  return Ok{};
}

}  // namespace

Result<KernelInput> load_kernel(const std::string& path, const std::string& relocs_path) {
  Result<std::vector<uint8_t>> file = read_file(path);
  if (!file) return file.error();
  if (file->empty()) return error_in(path, "empty file");
  if (!looks_like_bzimage(*file)) {
    Result<KernelInput> input = kernel_input_from_elf(std::move(*file), path);
    if (!input) return input;
    input->version = version_from_banner(input->elf);
    Status relocs = choose_relocs(*input, path, relocs_path);
    if (!relocs) return relocs.error();
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
  // The signature covers the old image's bytes; the packed image needs one of its own.
  Result<std::optional<PeView>> pe = read_pe_view(*file, path);
  input->was_signed = pe.ok() && pe->has_value() && (*pe)->signature_size != 0;
  input->version = version_from_bzimage(*file, image->header, image->setup_size);
  if (!input->version) input->version = version_from_banner(input->elf);
  Status relocs = choose_relocs(*input, path, relocs_path);
  if (!relocs) return relocs.error();
  return input;
}

}  // namespace kpack
