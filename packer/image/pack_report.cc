#include "packer/image/pack_report.h"

#include "packer/input/bzimage_reader.h"
#include "packer/input/elf_reader.h"
#include "packer/input/relocs_table.h"

namespace kpack {

void add_pack_warnings(Context& ctx, const KernelInput& input) {
  std::vector<std::string>& lines = ctx.warnings;
  if (input.five_level_source.empty())
    lines.push_back("warning: " + ctx.input +
                    ": cannot tell whether the kernel runs with 5-level paging (no symbol table, no embedded "
                    "configuration, no .config or System.map beside it): packed for 4 levels; say --5level or "
                    "--no-5level, or name its --config FILE or --system-map FILE");
  if (input.relocs_origin == RelocsOrigin::kNone)
    lines.push_back("warning: " + ctx.input +
                    " has no relocation table (no .rela sections, no --relocs): the image can randomize only the "
                    "physical address");
  if (input.was_signed)
    lines.push_back("note: " + ctx.input +
                    " was signed; its signature does not cover the new image, which is unsigned (sign it again, "
                    "e.g. with sbsign)");
}

namespace {

std::string relocations(const KernelInput& input) {
  const char* origin = input.relocs_origin == RelocsOrigin::kFile         ? "from --relocs"
                       : input.relocs_origin == RelocsOrigin::kStockImage ? "from the bzImage's payload"
                       : input.relocs_origin == RelocsOrigin::kComputed   ? "computed from its .rela sections"
                                                                          : "";
  if (input.relocation_table.empty()) return "relocations: none (the image randomizes only the physical address)";
  Result<RelocationLists> table = split_relocation_lists({input.relocation_table, ""});
  return "relocations: " + std::string(origin) + (table ? ", " + describe_relocation_lists(*table) : "");
}

// "stub and records N, payload M (lz4 level 12, 12 frames on 2 threads)"
std::string payload(const PackedPayload& read, const PackOptions& options) {
  const PackerRecord& record = *read.packer_record;
  std::string text = "stub and records " + std::to_string(uint64_t{record.payload_offset}) + ", payload " +
                     std::to_string(read.payload_size) + " (" + codec_name(options.compress.codec);
  if (options.compress.codec != Codec::kRaw)
    text += " level " + std::to_string(options.compress.level) + ", " + std::to_string(uint32_t{record.frame_count}) +
            " frames on " + std::to_string(options.compress.threads) + " thread" +
            (options.compress.threads == 1 ? "" : "s");
  return text + "); kernel at or above " + hex(record.min_kernel_address) + ", aligned to " +
         hex(record.kernel_alignment);
}

std::string layout(std::span<const uint8_t> image, const PackOptions& options, const std::optional<ElfLoad>& elf_load) {
  const std::string size = "layout: " + std::to_string(image.size()) + " bytes: ";
  if (elf_load) {
    Result<KpackElf> read = read_kpack_elf({image, ""});
    if (!read || !read->payload.packer_record) return "layout: unreadable";
    return size + "ELF, its PT_LOAD at " + hex(elf_load->address) + " (" + elf_placement_name(elf_load->placement) +
           "), file offset " + hex(elf_load->file_offset) + ": " + payload(read->payload, options) + "; PVH entry " +
           hex(read->pvh_entry) + ", e_entry " + hex(read->ehdr.entry);
  }
  Result<BzImage> read = read_bzimage({image, ""});
  if (!read || !read->packer_record) return "layout: unreadable";
  const boot::SetupHeader& h = read->header;
  return size + "setup " + std::to_string(read->setup_size) + ", " + payload(*read, options) + "; pref_address " +
         hex(h.pref_address) + ", init_size " + hex(h.init_size) + ", xloadflags " + hex(h.xloadflags);
}

}  // namespace

std::vector<std::string> pack_details(const Context& ctx, const KernelInput& input, const PackOptions& options,
                                      std::span<const uint8_t> image, const std::optional<ElfLoad>& elf_load) {
  std::vector<std::string> lines;
  for (const std::string& finding : input.findings) lines.push_back(ctx.input + ": " + finding);
  lines.push_back(ctx.input + ": " + relocations(input));
  lines.push_back(ctx.output + ": " + layout(image, options, elf_load));
  return lines;
}

}  // namespace kpack
