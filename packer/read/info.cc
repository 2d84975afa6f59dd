#include "packer/read/info.h"

#include <cinttypes>

#include "formats/elf64.h"
#include "formats/pe.h"
#include "formats/kpack_elf.h"
#include "packer/base/byte_io.h"
#include "packer/input/bzimage_reader.h"
#include "packer/input/elf_reader.h"
#include "packer/base/file_io.h"
#include "packer/input/kernel_input.h"
#include "packer/input/raw_pieces.h"
#include "packer/input/pe_view.h"
#include "packer/read/placement_report.h"
#include "packer/input/relocs_table.h"

namespace kpack {
namespace {

// The boot protocol fields a loader acts on.
void print_setup_header(const BzImage& image, const FileView& file, std::FILE* out) {
  const boot::SetupHeader& h = image.header;
  auto field = [&](const char* name, uint64_t value) { std::fprintf(out, "  %-20s 0x%" PRIx64 "\n", name, value); };
  std::fprintf(out, "%.*s: %s image, %zu bytes\n", static_cast<int>(file.name.size()), file.name.data(),
               image.packer_record ? "kpack" : "stock", file.bytes.size());
  std::fprintf(out, "setup header (boot protocol %u.%02u):\n", h.version >> 8, h.version & 0xFF);
  field("setup_sects", h.setup_sects);
  field("syssize", h.syssize);
  field("loadflags", h.loadflags);
  field("code32_start", h.code32_start);
  field("kernel_alignment", h.kernel_alignment);
  field("relocatable_kernel", h.relocatable_kernel);
  field("min_alignment", h.min_alignment);
  field("xloadflags", h.xloadflags);
  field("cmdline_size", h.cmdline_size);
  field("payload_offset", h.payload_offset);
  field("payload_length", h.payload_length);
  field("pref_address", h.pref_address);
  field("init_size", h.init_size);
  field("kernel_info_offset", h.kernel_info_offset);
  field("handover_offset", h.handover_offset);
}

// The EFI application view (PE/COFF), when the image has one.
void print_pe_view(const std::optional<PeView>& pe, std::FILE* out) {
  if (!pe) {
    std::fprintf(out, "pe: none (not an EFI application)\n");
    return;
  }
  std::fprintf(out,
               "pe: machine 0x%x, subsystem %u, entry 0x%x, SizeOfImage 0x%x, SizeOfHeaders 0x%x, "
               "image version %u, DllCharacteristics 0x%x, %s\n",
               pe->machine, pe->subsystem, pe->entry, pe->size_of_image, pe->size_of_headers, pe->major_image_version,
               pe->dll_characteristics, pe->signature_size ? "signed (certificate table present)" : "unsigned");
  for (const PeSection& s : pe->sections) {
    std::string name;
    for (char c : s.name) name += (c >= 0x20 && c < 0x7F) ? c : '?';
    auto flag = [&](uint32_t bit, char letter) { return s.characteristics & bit ? letter : '-'; };
    std::fprintf(out, "  %-8s rva 0x%08x size 0x%08x file 0x%08x+0x%08x %c%c%c\n", name.c_str(), s.virtual_address,
                 s.virtual_size, s.raw_offset, s.raw_size, flag(pe::kSectionRead, 'R'), flag(pe::kSectionWrite, 'W'),
                 flag(pe::kSectionExecute, 'X'));
  }
}

// What the payload decodes to, and the relocation table after the ELF.
void print_payload(const PackedPayload& image, const FileView& view, const KernelPayload& payload, std::FILE* out) {
  std::span<const uint8_t> file = view.bytes;
  std::fprintf(out, "payload: %s, %" PRIu64 " bytes -> ELF %zu bytes + relocations %zu bytes\n",
               stream_format_name(image.format), image.payload_size, payload.elf.size(),
               payload.relocation_table.size());
  KernelHeaders raw;
  uint32_t runs = 0;
  const uint8_t* stored = file.data() + image.payload_offset;
  if (image.packer_record && image.packer_record->codec == static_cast<uint32_t>(Codec::kRaw) &&
      parse_kernel_headers(stored, image.payload_size, image.payload_size, &raw).ok()) {
    // In place when the protected-mode part at 1 MiB (QEMU -kernel) puts every segment where it runs.
    // (An ELF's PT_LOAD says where it lies: its view above says so.)
    uint64_t first =
        boot::kDefaultCode32Start + (image.payload_offset - image.protected_offset) + raw.segments[0].offset;
    if (!looks_like_bzimage(file)) {
    } else if (mirrors_physical(raw) && first == image.packer_record->min_kernel_address)
      std::fprintf(out,
                   "layout: in-place (--layout in-place: loaded at 1 MiB, as QEMU -kernel loads it, every segment "
                   "already lies where it runs; the stub moves nothing)\n");
    else
      std::fprintf(out,
                   "layout: compact (--layout compact: no zeros before or between the segments, for firmware that "
                   "reads every byte; the stub moves the kernel unless it is loaded at pref_address 0x%" PRIx64 ")\n",
                   uint64_t{get<boot::SetupHeader>(file, uint64_t{boot::kSetupHeaderOffset}).pref_address});
    uint64_t zeros = left_out_zeros(raw, &runs);
    if (runs)
      std::fprintf(out,
                   "raw: %" PRIu64 " bytes of zero pages in %u run%s left out of the file (the stub zeroes them)\n",
                   zeros, runs, runs == 1 ? "" : "s");
  }
  if (payload.relocation_table.empty()) {
    std::fprintf(out, "relocations: none (physical randomization only)\n");
    return;
  }
  Result<RelocationLists> lists = split_relocation_lists({payload.relocation_table, view.name});
  if (lists)
    std::fprintf(out, "relocations: %s\n", describe_relocation_lists(*lists).c_str());
  else
    std::fprintf(out, "relocations: not a relocation table (%s)\n", lists.error().message.c_str());
}

// What the kpack record tells the stub: codec, floor, frames, what it randomizes, and who accepts
// a confidential VM's memory.
void print_packer_record(const PackerRecord& info, const KernelHeaders& kernel, std::FILE* out) {
  Codec codec = static_cast<Codec>(uint32_t{info.codec});
  std::fprintf(out, "kpack: codec %s, kernel runs at or above 0x%" PRIx64 "%s\n", codec_name(codec),
               uint64_t{info.min_kernel_address},
               info.min_kernel_address == kernel.physical.begin ? " (its link address)" : "");
  if (codec != Codec::kRaw) {
    FrameDigest digest = static_cast<FrameDigest>(uint32_t{info.digest});
    std::fprintf(out, "frames: %u independent, each proved by %s\n", uint32_t{info.frame_count},
                 digest == FrameDigest::kXxh3 ? "XXH3-64 in the frame table" : "the format's own check");
  }
  // What the stub randomizes unless the command line says nokaslr.
  bool physical = codec != Codec::kRaw || (info.flags & kRecordRandomizeRawPhysically);
  std::fprintf(out, "kaslr: physical %s, virtual %s\n",
               physical ? "yes (a random 2 MiB slot at or above the floor)"
                        : "no (raw: left where loaded when aligned at or above the floor, as at pref_address, else "
                          "moved to the lowest fit; --randomize-physical moves it to a random slot)",
               info.relocations_size ? "yes (the relocation table above)" : "no (no relocation table)");
  if (info.bss_pages)
    std::fprintf(out, "bss: %u pages at +0x%" PRIx64 " (.bss, .brk) left for the kernel to clear, as it does itself\n",
                 uint32_t{info.bss_pages}, uint64_t{info.bss_page} * 4096);
  else
    std::fprintf(out, "bss: zeroed by the stub (the input had no section headers to find it)\n");
  std::fprintf(out, "efi: unaccepted memory %s\n",
               info.flags & kRecordKernelAcceptsMemory ? "left to the kernel, which accepts memory itself"
                                                       : "accepted by the firmware at ExitBootServices");
}

// The kernel's loadable segments and entry point.
void print_kernel(const KernelHeaders& k, std::FILE* out) {
  std::fprintf(out, "segments (%u), alignment 0x%" PRIx64 ":\n", k.segment_count, k.alignment);
  for (uint32_t i = 0; i < k.segment_count; ++i) {
    const LoadSegment& s = k.segments[i];
    std::fprintf(out,
                 "  paddr 0x%08" PRIx64 " vaddr 0x%016" PRIx64 " filesz 0x%08" PRIx64 " memsz 0x%08" PRIx64 " %c%c%c\n",
                 s.paddr, s.vaddr, s.filesz, s.memsz, s.flags & elf::kPfR ? 'R' : '-', s.flags & elf::kPfW ? 'W' : '-',
                 s.flags & elf::kPfX ? 'X' : '-');
  }
  std::fprintf(out, "entry: 0x%" PRIx64 " (physical, %" PRIu64 " bytes into the kernel)\n", k.entry,
               k.entry - k.physical.begin);
}

// kpack's ELF output: the headers the VMMs read, and why the image lies where it does.
void print_elf_view(const KpackElf& elf, const FileView& view, const KernelHeaders& kernel, std::FILE* out) {
  std::span<const uint8_t> file = view.bytes;
  const PackerRecord& info = *elf.payload.packer_record;
  std::fprintf(out, "%.*s: kpack ELF image (%s), %zu bytes\n", static_cast<int>(view.name.size()), view.name.data(),
               codec_name(static_cast<Codec>(uint32_t{info.codec})), file.size());
  std::fprintf(out,
               "elf: ELF64 x86-64 executable, entry 0x%" PRIx64
               " (the 64-bit boot protocol's entry: Firecracker without PVH)\n",
               uint64_t{elf.ehdr.entry});
  std::fprintf(out, "program headers (%zu):\n", elf.phdrs.size());
  for (const elf::Phdr& p : elf.phdrs) {
    const char* type = p.type == elf::kPtLoad ? "LOAD" : p.type == elf::kPtNote ? "NOTE" : "other";
    auto flag = [&](uint32_t bit, char letter) { return p.flags & bit ? letter : '-'; };
    std::fprintf(out,
                 "  %-5s offset 0x%08" PRIx64 " paddr 0x%08" PRIx64 " filesz 0x%08" PRIx64 " memsz 0x%08" PRIx64
                 " align 0x%" PRIx64 " %c%c%c\n",
                 type, uint64_t{p.offset}, uint64_t{p.paddr}, uint64_t{p.filesz}, uint64_t{p.memsz}, uint64_t{p.align},
                 flag(elf::kPfR, 'R'), flag(elf::kPfW, 'W'), flag(elf::kPfX, 'X'));
  }
  std::fprintf(out, "notes (%" PRIu64 "):\n", elf.notes);
  std::fprintf(out,
               "  Xen PHYS32_ENTRY: PVH entry 0x%08" PRIx64
               " (32-bit, paging off: QEMU -kernel, Cloud Hypervisor, Firecracker 1.12+)\n",
               elf.pvh_entry);
  std::fprintf(out, "  kpack: record at 0x%" PRIx64 " in the PT_LOAD\n", elf.payload.packer_record_offset);
  // Why there: the kernel runs at its floor with nokaslr and needs its span from there.
  const uint64_t base = elf.load.paddr, end = base + elf.load.memsz, floor = info.min_kernel_address;
  const uint64_t kernel_end = floor + kernel.span();
  std::fprintf(
      out, "load: 0x%08" PRIx64 "-0x%08" PRIx64 ", the kernel at 0x%08" PRIx64 "-0x%08" PRIx64 " with nokaslr: ", base,
      end, floor, kernel_end);
  KernelHeaders raw;
  const uint8_t* stored = file.data() + elf.payload.payload_offset;
  if (info.codec == static_cast<uint32_t>(Codec::kRaw) &&
      parse_kernel_headers(stored, elf.payload.payload_size, elf.payload.payload_size, &raw).ok() &&
      base + info.payload_offset + raw.segments[0].offset == floor)
    std::fprintf(out, "raw, its first segment loaded where it runs (no copy)\n");
  else if (end <= floor)
    std::fprintf(out, "below the kernel's floor (no more guest RAM than the stock bzImage needs)\n");
  else if (base >= kernel_end)
    std::fprintf(out,
                 "above the kernel (it does not fit below its floor): the guest needs %" PRIu64
                 " MiB more RAM than the stock bzImage\n",
                 (end - kernel_end + (1 << 20) - 1) >> 20);
  else
    std::fprintf(out, "over the kernel's place at its floor: the stub moves the kernel elsewhere\n");
}

Status print_elf_info(const FileView& file, std::FILE* out, const InfoLimits& limits) {
  KpackElf elf = KPACK_TRY_RESULT(read_kpack_elf(file));
  KernelPayload payload = KPACK_TRY_RESULT(extract_kernel(elf.payload, file, limits.max_decoded));
  KernelHeaders kernel = KPACK_TRY_RESULT(parse_vmlinux({payload.elf, file.name}));
  print_elf_view(elf, file, kernel, out);
  print_payload(elf.payload, file, payload, out);
  print_packer_record(*elf.payload.packer_record, kernel, out);
  print_kernel(kernel, out);
  // Every ELF loader puts the PT_LOAD at its physical address: one placement to show.
  print_placement_heading(out, limits.ram_size);
  print_placement_at(elf.payload, elf.protected_part(file.bytes), elf.load.paddr, "p_paddr: every ELF loader", out,
                     limits.ram_size);
  return Ok{};
}

}  // namespace

Status print_info(const std::string& path, std::FILE* out) {
  std::vector<uint8_t> file = KPACK_TRY_RESULT(read_file(path));
  return print_image_info({file, path}, out);
}

Status print_image_info(const FileView& file, std::FILE* out, const InfoLimits& limits) {
  // The image is read and checked before the first line: a bad one prints only its error.
  if (looks_like_elf(file.bytes)) return print_elf_info(file, out, limits);
  BzImage image = KPACK_TRY_RESULT(read_bzimage(file));
  KernelPayload payload = KPACK_TRY_RESULT(extract_kernel(image, file, limits.max_decoded));
  KernelHeaders kernel = KPACK_TRY_RESULT(parse_vmlinux({payload.elf, file.name}));
  print_setup_header(image, file, out);
  // A damaged PE header (rare: the loaders above need none) ends the output after the setup header.
  print_pe_view(KPACK_TRY_RESULT(read_pe_view(file)), out);
  print_payload(image, file, payload, out);
  if (image.packer_record) print_packer_record(*image.packer_record, kernel, out);
  print_kernel(kernel, out);
  // Where the stub would put the kernel for the usual loaders, by running its engine.
  print_placement_report(image, file.bytes, out, limits.ram_size);
  return Ok{};
}

}  // namespace kpack
