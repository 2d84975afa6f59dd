#include "packer/input/elf_reader.h"

#include <cstring>
#include <optional>

#include "formats/boot_params.h"
#include "formats/kpack_elf.h"
#include "packer/base/byte_io.h"
#include "packer/codecs/codecs.h"
#include "packer/input/pe_view.h"
#include "stub/base/range.h"
#include "stub/unpack/kernel_headers.h"

namespace kpack {
namespace {

// More program headers than any ELF kpack reads has: a bound before anything is allocated.
constexpr uint64_t kMaxProgramHeaders = 64;

// True when [offset, offset + size) lies within `limit`, without overflowing.
bool fits(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

struct Note {
  uint32_t type = 0;
  std::span<const uint8_t> name;  // namesz bytes, its NUL included
  std::span<const uint8_t> desc;
};

// The notes of the PT_NOTE `p`, each checked to lie inside it; an error message when one does not.
Result<std::vector<Note>> notes_of(const FileView& view, const elf::Phdr& p) {
  std::span<const uint8_t> file = view.bytes;
  if (!fits(p.offset, p.filesz, file.size()))
    return view.error("the PT_NOTE (offset " + hex(p.offset) + ", " + std::to_string(p.filesz) +
                      " bytes) lies outside the " + std::to_string(file.size()) + "-byte file");
  std::span<const uint8_t> bytes = file.subspan(p.offset, p.filesz);
  std::vector<Note> notes;
  for (uint64_t at = 0; at < bytes.size();) {
    if (bytes.size() - at < sizeof(elf::Nhdr))
      return view.error("a note header at " + hex(p.offset + at) + " runs past its PT_NOTE");
    const auto header = get<elf::Nhdr>(bytes, at);
    const uint64_t name_at = at + sizeof(elf::Nhdr);
    const uint64_t desc_at = name_at + align_up(header.namesz, elf::kNoteAlign);
    const uint64_t end = desc_at + align_up(header.descsz, elf::kNoteAlign);
    if (end > bytes.size())
      return view.error("the note at " + hex(p.offset + at) + " (name " + std::to_string(header.namesz) +
                        " bytes, descriptor " + std::to_string(header.descsz) + " bytes) runs past its PT_NOTE");
    notes.push_back({header.type, bytes.subspan(name_at, header.namesz), bytes.subspan(desc_at, header.descsz)});
    at = end;
  }
  return notes;
}

bool named(const Note& note, std::span<const uint8_t> expected) {
  return note.name.size() == expected.size() && std::memcmp(note.name.data(), expected.data(), expected.size()) == 0;
}
bool is_xen_pvh(const Note& note) {
  return note.type == elf::kXenElfnotePhys32Entry &&
         named(note, std::span(reinterpret_cast<const uint8_t*>(elf::kXenNoteName), sizeof(elf::kXenNoteName)));
}
bool is_kpack(const Note& note) {
  return note.type == kKpackNotePackerRecord &&
         named(note, std::span(reinterpret_cast<const uint8_t*>(kKpackNoteName), kKpackNoteNameSize));
}

// The ELF header as an x86-64 executable with readable program headers; they go to `out`.
Status read_headers(const FileView& view, KpackElf& out) {
  std::span<const uint8_t> file = view.bytes;
  using namespace elf;
  if (file.size() < sizeof(Ehdr))
    return view.error("too short to be an ELF file (" + std::to_string(file.size()) + " bytes)");
  if (std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) return view.error("not an ELF file");
  out.ehdr = get<Ehdr>(file, 0);
  const Ehdr& h = out.ehdr;
  if (h.ident[kIdentClass] != kClass64) return view.error("not a 64-bit ELF file");
  if (h.ident[kIdentData] != kDataLittle) return view.error("not a little-endian ELF file");
  if (h.type != kTypeExec || h.machine != kMachineX86_64)
    return view.error("not an x86-64 executable (ELF type " + std::to_string(h.type) + ", machine " +
                      std::to_string(h.machine) + ")");
  if (h.phentsize != sizeof(Phdr))
    return view.error("program header size " + std::to_string(h.phentsize) + ", expected 56");
  if (h.phnum == 0 || h.phnum > kMaxProgramHeaders)
    return view.error("has " + std::to_string(h.phnum) + " program headers");
  if (h.phoff < sizeof(Ehdr) || !fits(h.phoff, uint64_t{h.phnum} * sizeof(Phdr), file.size()))
    return view.error("the program headers (offset " + hex(h.phoff) + ", " + std::to_string(h.phnum) +
                      ") lie outside the " + std::to_string(file.size()) + "-byte file");
  for (uint64_t i = 0; i < h.phnum; ++i) out.phdrs.push_back(get<Phdr>(file, h.phoff + i * sizeof(Phdr)));
  return Ok{};
}

// The one PT_LOAD, at a physical address as the loaders take it and within the file.
Status read_load_segment(const FileView& view, KpackElf& out) {
  std::span<const uint8_t> file = view.bytes;
  int loads = 0;
  for (const elf::Phdr& p : out.phdrs)
    if (p.type == elf::kPtLoad && p.memsz) out.load = p, ++loads;
  if (loads != 1) return view.error("has " + std::to_string(loads) + " PT_LOAD segments, a kpack ELF one");
  const elf::Phdr& p = out.load;
  const std::string what = "the PT_LOAD (offset " + hex(p.offset) + ", paddr " + hex(p.paddr) + ")";
  if (!fits(p.offset, p.filesz, file.size()))
    return view.error("truncated: " + what + " needs " + std::to_string(p.filesz) + " bytes, the file has " +
                      std::to_string(file.size() > p.offset ? file.size() - p.offset : 0) + " there");
  if (p.filesz == 0 || p.filesz > p.memsz)
    return view.error(what + " has " + std::to_string(p.filesz) + " file bytes for " + std::to_string(p.memsz) +
                      " in memory");
  if (p.vaddr != p.paddr || p.paddr % 4096 || p.paddr < kLowestSegmentAddress ||
      !Range{kLowestSegmentAddress, kHighestSegmentEnd}.contains(range_of(p.paddr, p.memsz)))
    return view.error(what + " is not a page-aligned physical range between 1 MiB and 4 GiB (vaddr " + hex(p.vaddr) +
                      ", " + std::to_string(p.memsz) + " bytes)");
  if (p.align == 0 || p.align % kElfLoadAlign || p.offset % p.align != p.paddr % p.align)
    return view.error(what + " has p_align " + hex(p.align) + ": not a multiple of 2 MiB congruent to its offset");
  return Ok{};
}

// The PVH entry and the record's offset, from the notes.
Result<uint64_t> read_notes(const FileView& view, KpackElf& out) {
  std::optional<uint64_t> record;
  bool pvh = false;
  for (const elf::Phdr& p : out.phdrs) {
    if (p.type != elf::kPtNote) continue;
    for (const Note& note : KPACK_TRY_RESULT(notes_of(view, p))) {
      ++out.notes;
      // Read as rust-vmm reads it: at least 4 bytes, the low 4 the entry; QEMU reads 8 (a size_t).
      if (is_xen_pvh(note) && !pvh) {
        if (note.desc.size() < 4) return view.error("the Xen PVH note's descriptor is shorter than 4 bytes");
        out.pvh_entry =
            note.desc.size() >= 8 ? load_le<uint64_t>(note.desc.data()) : load_le<uint32_t>(note.desc.data());
        pvh = true;
      }
      if (is_kpack(note) && !record) {
        if (note.desc.size() < 8) return view.error("the kpack note's descriptor is shorter than 8 bytes");
        record = load_le<uint64_t>(note.desc.data());
      }
    }
  }
  if (!pvh) return view.error("has no Xen PVH note (XEN_ELFNOTE_PHYS32_ENTRY)");
  if (!record) return view.error("has no kpack note: not written by kpack --elf");
  return *record;
}

// The stub's entries at the places the headers give: e_entry the 64-bit entry, the note the PVH one.
Status check_entries(const FileView& view, std::span<const uint8_t> part, KpackElf& out) {
  Result<StubLayout> layout = read_stub_layout({part, view.name});
  if (!layout) return view.error("the PT_LOAD does not start with a kpack stub (no layout block at +0x1c0)");
  out.stub = *layout;
  const uint64_t base = out.load.paddr;
  if (out.ehdr.entry != base + boot::kEntry64Offset)
    return view.error("e_entry " + hex(out.ehdr.entry) + " is not the stub's 64-bit entry (" +
                      hex(base + boot::kEntry64Offset) + ")");
  if (out.pvh_entry != base + out.stub.pvh_entry)
    return view.error("the Xen PVH note's entry " + hex(out.pvh_entry) + " is not the stub's PVH entry (" +
                      hex(base + out.stub.pvh_entry) + ")");
  return Ok{};
}

// The kpack record at `at`, and the payload it locates.
Status read_packer_record_and_payload(const FileView& view, uint64_t at, KpackElf& out) {
  std::span<const uint8_t> part = out.protected_part(view.bytes);
  if (!fits(at, sizeof(PackerRecord), part.size()) ||
      std::memcmp(part.data() + at, kPackerRecordMagic, sizeof(kPackerRecordMagic)) != 0)
    return view.error("no kpack record at " + hex(out.load.offset + at) + ", where its kpack note says");
  PackerRecord info = KPACK_TRY_RESULT(read_packer_record(view, part, at, out.load.offset));
  if (info.image_size != part.size())
    return view.error("the kpack record's image size " + std::to_string(info.image_size) + " is not the " +
                      std::to_string(part.size()) + " bytes of its PT_LOAD");
  PackedPayload& payload = out.payload;
  payload.protected_offset = out.load.offset;
  payload.payload_offset = out.load.offset + info.payload_offset;
  payload.payload_size = info.payload_size;
  payload.packer_record = info;
  payload.packer_record_offset = at;
  std::optional<StreamFormat> format = detect_stream_format(part.subspan(info.payload_offset, info.payload_size));
  if (!format) return view.error("unknown payload format at " + hex(payload.payload_offset));
  payload.format = *format;
  return Ok{};
}

}  // namespace

bool looks_like_elf(std::span<const uint8_t> file) {
  return file.size() >= sizeof(elf::kMagic) && std::memcmp(file.data(), elf::kMagic, sizeof(elf::kMagic)) == 0;
}

bool looks_like_kpack_elf(std::span<const uint8_t> file) {
  KpackElf elf;
  if (!read_headers({file, ""}, elf).ok()) return false;
  for (const elf::Phdr& p : elf.phdrs) {
    if (p.type != elf::kPtNote) continue;
    Result<std::vector<Note>> notes = notes_of({file, ""}, p);
    if (notes.ok())
      for (const Note& note : *notes)
        if (is_kpack(note)) return true;
  }
  return false;
}

Result<KpackElf> read_kpack_elf(const FileView& view) {
  std::span<const uint8_t> file = view.bytes;
  KpackElf elf;
  KPACK_TRY_RESULT(read_headers(view, elf));
  KPACK_TRY_RESULT(read_load_segment(view, elf));
  uint64_t record = KPACK_TRY_RESULT(read_notes(view, elf));
  KPACK_TRY_RESULT(check_entries(view, elf.protected_part(file), elf));
  KPACK_TRY_RESULT(read_packer_record_and_payload(view, record, elf));
  return elf;
}

}  // namespace kpack
