#include "packer/input/kernel_input.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "formats/uefi.h"
#include "packer/input/bzimage_reader.h"
#include "packer/input/elf_reader.h"
#include "packer/input/elf_sections.h"
#include "packer/base/file_io.h"
#include "packer/input/input_kind.h"
#include "packer/input/kernel_version.h"
#include "packer/input/pe_view.h"
#include "packer/input/relocs_from_elf.h"

namespace kpack {

Result<KernelHeaders> parse_vmlinux(const FileView& file) {
  std::span<const uint8_t> elf = file.bytes;
  KernelHeaders kernel;
  StubStatus status = parse_kernel_headers(elf.data(), elf.size(), elf.size(), &kernel);
  if (status.ok()) return kernel;
  // The kernel's release, when its banner survived: a layout kpack does not know is then one line
  // that says which kernel brought it.
  std::optional<std::string> version = version_from_banner(elf);
  std::string release = version ? "kernel " + version->substr(0, version->find(' ')) + ": " : "";
  return file.error(release + status.message + " (" + hex(status.a) + ", " + hex(status.b) + ")");
}

bool kernel_accepts_memory(std::span<const uint8_t> elf) {
  const auto* guid = reinterpret_cast<const uint8_t*>(&efi::kLinuxUnacceptedMemoryTable);
  return std::search(elf.begin(), elf.end(), std::boyer_moore_horspool_searcher(guid, guid + sizeof(efi::Guid))) !=
         elf.end();
}

namespace {

// The allocated section `name`'s memory as offsets from the kernel's lowest physical address
// (through the segment that holds it); empty when there is none.
Range section_in_kernel(const ElfSections& sections, const KernelHeaders& k, std::string_view name) {
  std::optional<elf::Shdr> section = find_alloc_section(sections, name);
  if (!section) return Range{};
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    uint64_t at = section->addr - s.vaddr;
    if (section->addr >= s.vaddr && at <= s.memsz && section->size <= s.memsz - at)
      return range_of(s.paddr + at - k.physical.begin, section->size);
  }
  return Range{};
}

// .bss and .brk, which the kernel clears itself (arch/x86/kernel/head64.c, clear_bss) before it
// reads them: the whole pages of both when .brk follows .bss, else of .bss alone; empty without
// section headers.
Range cleared_by_kernel(const std::vector<uint8_t>& elf, const KernelHeaders& k) {
  ElfSections sections({elf, ""});
  if (!sections.read()) return Range{};
  Range bss = section_in_kernel(sections, k, ".bss"), brk = section_in_kernel(sections, k, ".brk");
  if (bss.empty()) return Range{};
  if (!brk.empty() && brk.begin >= bss.end && brk.begin - bss.end < 4096) bss.end = brk.end;
  Range pages{align_up(bss.begin, 4096), align_down(bss.end, 4096)};
  return pages.empty() ? Range{} : pages;
}

// What a kpack image's packer found (PackerRecord::bss_page).
Range cleared_by_kernel(const PackerRecord& record) {
  return range_of(uint64_t{record.bss_page} * 4096, uint64_t{record.bss_pages} * 4096);
}

}  // namespace

Result<KernelInput> kernel_input_from_elf(std::vector<uint8_t> elf, std::string_view name) {
  KernelInput input;
  input.kernel = KPACK_TRY_RESULT(parse_vmlinux({elf, name}));
  input.accepts_memory = kernel_accepts_memory(elf);
  input.elf = std::move(elf);
  return input;
}

namespace {

// Sets input.relocation_table by the precedence load_kernel documents.
Status choose_relocs(const Context& ctx, KernelInput& input) {
  const std::string& path = ctx.input;
  const std::string& relocs_path = ctx.relocs_input;
  if (!relocs_path.empty()) {
    std::optional<RelocationFormat> expected = relocs_format_of_kernel(input.elf);
    std::vector<uint8_t> bytes = KPACK_TRY_RESULT(read_file(relocs_path));
    RelocationLists table = KPACK_TRY_RESULT(split_relocation_lists({bytes, relocs_path}));
    if (expected && table.format != *expected)
      return error_in(relocs_path, std::string("relocation table is ") + relocation_format_name(table.format) +
                                       " but " + path + " expects one " + relocation_format_name(*expected));
    input.relocation_table = std::move(bytes);
    input.relocs_origin = RelocsOrigin::kFile;
    return Ok{};
  }
  if (!input.relocation_table.empty()) {
    input.relocs_origin = RelocsOrigin::kStockImage;
    return Ok{};
  }
  // Without a banner the format is unknown: compute anyway, to tell "no .rela sections" apart.
  std::optional<RelocationFormat> expected = relocs_format_of_kernel(input.elf);
  std::optional<RelocationLists> table =
      KPACK_TRY_RESULT(relocs_from_elf({input.elf, path}, expected.value_or(RelocationFormat::kWithoutInverse32)));
  if (!table) return Ok{};
  if (!expected)
    return error_in(path,
                    "has .rela sections but no 'Linux version' banner to tell which relocation table "
                    "format it expects (give one with --relocs FILE)");
  input.relocation_table = encode_relocation_lists(*table);
  input.relocs_origin = RelocsOrigin::kComputed;
  return Ok{};
}

}  // namespace

Result<KernelInput> load_kernel(const Context& ctx, const KernelHints& hints) {
  return load_kernel_from(ctx, KPACK_TRY_RESULT(read_file(ctx.input)), hints);
}

Result<KernelInput> load_kernel_from(const Context& ctx, std::vector<uint8_t> file, const KernelHints& hints) {
  const std::string& path = ctx.input;
  const FileView view{file, path};
  // kpack's own ELF output: its kernel, relocations and paging levels are in its payload and record.
  if (looks_like_kpack_elf(file)) {
    KpackElf elf = KPACK_TRY_RESULT(read_kpack_elf(view));
    KernelPayload payload = KPACK_TRY_RESULT(extract_kernel(elf.payload, view));
    KernelInput input = KPACK_TRY_RESULT(kernel_input_from_elf(std::move(payload.elf), path));
    input.relocation_table = std::move(payload.relocation_table);
    input.source_format = elf.payload.format;
    input.version = version_from_banner(input.elf);
    input.cleared_by_kernel = cleared_by_kernel(*elf.payload.packer_record);
    const bool five_level = elf.payload.packer_record->flags & kRecordKernelFiveLevel;
    KPACK_TRY_RESULT(infer_kernel_facts(
        input, path, hints,
        Finding{five_level, std::string("the kpack ELF's record (") + (five_level ? "" : "no ") + "5-level flag)"}));
    KPACK_TRY_RESULT(choose_relocs(ctx, input));
    return input;
  }
  InputKind kind = classify_input(file);
  if (kind != InputKind::kVmlinux && kind != InputKind::kOtherElf && kind != InputKind::kBzImage &&
      kind != InputKind::kKpackImage)
    return wrong_kind(view, "a vmlinux ELF or a bzImage");
  if (kind == InputKind::kVmlinux || kind == InputKind::kOtherElf) {
    if (std::optional<uint64_t> claimed = elf_claimed_size(file)) KPACK_TRY_RESULT(check_not_truncated(view, *claimed));
    KernelInput input = KPACK_TRY_RESULT(kernel_input_from_elf(std::move(file), path));
    input.version = version_from_banner(input.elf);
    input.cleared_by_kernel = cleared_by_kernel(input.elf, input.kernel);
    KPACK_TRY_RESULT(infer_kernel_facts(input, path, hints, std::nullopt));
    KPACK_TRY_RESULT(choose_relocs(ctx, input));
    return input;
  }

  BzImage image = KPACK_TRY_RESULT(read_bzimage(view));
  KernelPayload payload = KPACK_TRY_RESULT(extract_kernel(image, view));
  KernelInput input = KPACK_TRY_RESULT(kernel_input_from_elf(std::move(payload.elf), path));
  input.relocation_table = std::move(payload.relocation_table);
  input.source_format = image.format;
  input.cmdline_size = image.header.cmdline_size;
  // A stock image holds the linker's vmlinux, sections included; a kpack image's record says what
  // its packer knew.
  input.cleared_by_kernel =
      image.packer_record ? cleared_by_kernel(*image.packer_record) : cleared_by_kernel(input.elf, input.kernel);
  // The signature covers the old image's bytes; the packed image needs one of its own.
  Result<std::optional<PeView>> pe = read_pe_view(view);
  input.was_signed = pe.ok() && pe->has_value() && (*pe)->signature_size != 0;
  input.version = version_from_bzimage(file, image.header, image.setup_size);
  if (!input.version) input.version = version_from_banner(input.elf);
  // The header says what the stock decompressor (or the kpack stub) was told of the kernel.
  const bool five_level = image.header.xloadflags & boot::kXlf5LevelEnabled;
  KPACK_TRY_RESULT(infer_kernel_facts(input, path, hints,
                                      Finding{five_level, std::string("the bzImage's xloadflags (") +
                                                              (five_level ? "" : "no ") + "XLF_5LEVEL_ENABLED)"}));
  KPACK_TRY_RESULT(choose_relocs(ctx, input));
  return input;
}

}  // namespace kpack
