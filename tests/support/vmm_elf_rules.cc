#include "tests/support/vmm_elf_rules.h"

#include <cstring>
#include <optional>

#include "formats/elf64.h"
#include "formats/le.h"

namespace kpack::test {
namespace {

constexpr uint64_t kHighMemoryStart = 0x100000;     // Firecracker HIMEM_START, Cloud Hypervisor HIGH_RAM_START
constexpr uint64_t kKernelSegmentAlign = 0x200000;  // rust-vmm KERNEL_SEGMENT_ALIGN
constexpr uint32_t kMultibootMagic = 0x1BADB002;
constexpr uint64_t kQemuHeaderBytes = 8192;  // x86_load_linux reads this much for its checks

class Checker {
 public:
  explicit Checker(std::span<const uint8_t> file) : file_(file) {}

  VmmElfVerdict run() {
    if (file_.size() < sizeof(elf::Ehdr)) {
      fail("rust-vmm ReadElfHeader", "the file has " + std::to_string(file_.size()) + " bytes");
      return verdict_;
    }
    std::memcpy(&ehdr_, file_.data(), sizeof(ehdr_));
    verdict_.entry = ehdr_.entry;
    if (!header_rules()) return verdict_;
    qemu_path_rules();
    if (!read_program_headers()) return verdict_;
    load_rules();
    std::optional<uint64_t> rust_vmm = rust_vmm_pvh_entry();
    std::optional<uint64_t> qemu = qemu_pvh_entry();
    if (rust_vmm) verdict_.pvh_entry = *rust_vmm;
    if (rust_vmm && qemu && *rust_vmm != *qemu)
      fail("PVH entry", "rust-vmm reads " + hex(*rust_vmm) + ", QEMU " + hex(*qemu));
    if (!in_loaded_bytes(verdict_.entry)) fail("e_entry", hex(verdict_.entry) + " is not in a PT_LOAD's file bytes");
    if (rust_vmm && !in_loaded_bytes(*rust_vmm))
      fail("PVH entry", hex(*rust_vmm) + " is not in a PT_LOAD's file bytes");
    return verdict_;
  }

 private:
  static std::string hex(uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof(text), "%#llx", static_cast<unsigned long long>(value));
    return text;
  }
  void fail(const std::string& rule, const std::string& what) { verdict_.violations.push_back(rule + ": " + what); }
  bool readable(uint64_t offset, uint64_t size) const {
    return offset <= file_.size() && size <= file_.size() - offset;
  }
  template <typename T>
  T read(uint64_t offset) const {
    T value;
    std::memcpy(&value, file_.data() + offset, sizeof(T));
    return value;
  }

  // rust-vmm's validate_header and e_entry check; false when nothing further can be read.
  bool header_rules() {
    if (std::memcmp(ehdr_.ident, elf::kMagic, sizeof(elf::kMagic)) != 0) {
      fail("rust-vmm InvalidElfMagicNumber", "no \\x7fELF");
      return false;
    }
    // rust-vmm reads an Elf64_Ehdr whatever the class; QEMU would load a 32-bit file differently.
    if (ehdr_.ident[elf::kIdentClass] != elf::kClass64)
      fail("class", "ELF class " + std::to_string(ehdr_.ident[elf::kIdentClass]) + ", not 64-bit");
    if (ehdr_.ident[elf::kIdentData] != elf::kDataLittle) fail("rust-vmm BigEndianElfOnLittle", "not little-endian");
    if (ehdr_.phentsize != sizeof(elf::Phdr))
      fail("rust-vmm InvalidProgramHeaderSize", "e_phentsize " + std::to_string(ehdr_.phentsize));
    if (ehdr_.phoff < sizeof(elf::Ehdr)) fail("rust-vmm InvalidProgramHeaderOffset", "e_phoff " + hex(ehdr_.phoff));
    if (ehdr_.entry < kHighMemoryStart) fail("rust-vmm InvalidEntryAddress", "e_entry " + hex(ehdr_.entry));
    if (ehdr_.machine != elf::kMachineX86_64) fail("machine", "e_machine " + std::to_string(ehdr_.machine));
    return verdict_.violations.empty();
  }

  // What makes QEMU -kernel take another path than load_elfboot, or refuse the file there.
  void qemu_path_rules() {
    if (readable(0x202, 4) && read<uint32_t>(0x202) == 0x53726448)
      fail("QEMU bzImage", "\"HdrS\" at 0x202: QEMU loads the file as a bzImage");
    // load_multiboot: a magic whose checksum holds, in the first 8 KiB (the header is 48 bytes).
    uint64_t scanned = std::min<uint64_t>(file_.size(), kQemuHeaderBytes);
    for (uint64_t i = 0; i + 48 <= scanned && i < kQemuHeaderBytes - 48; i += 4) {
      if (read<uint32_t>(i) != kMultibootMagic) continue;
      if (static_cast<uint32_t>(kMultibootMagic + read<uint32_t>(i + 4) + read<uint32_t>(i + 8)) == 0)
        fail("QEMU multiboot", "a multiboot header at " + hex(i));
    }
    if (ehdr_.flags & 0x00010004) fail("QEMU elfboot flags", "e_flags " + hex(ehdr_.flags));
  }

  bool read_program_headers() {
    uint64_t bytes = uint64_t{ehdr_.phnum} * sizeof(elf::Phdr);
    if (!readable(ehdr_.phoff, bytes)) {
      fail("rust-vmm ReadProgramHeader",
           std::to_string(ehdr_.phnum) + " program headers at " + hex(ehdr_.phoff) + " pass the file's end");
      return false;
    }
    for (uint64_t i = 0; i < ehdr_.phnum; ++i) phdrs_.push_back(read<elf::Phdr>(ehdr_.phoff + i * sizeof(elf::Phdr)));
    return true;
  }

  // Each PT_LOAD with file bytes: rust-vmm's alignment and read, QEMU's sizes, and what booting needs.
  void load_rules() {
    for (size_t i = 0; i < phdrs_.size(); ++i) {
      const elf::Phdr& p = phdrs_[i];
      if (p.type != elf::kPtLoad || p.filesz == 0) continue;
      ++verdict_.load_segments;
      const std::string which = "PT_LOAD " + std::to_string(i);
      if (p.align & (kKernelSegmentAlign - 1)) fail("rust-vmm Align", which + " has p_align " + hex(p.align));
      if (!readable(p.offset, p.filesz)) fail("rust-vmm ReadKernelImage", which + "'s bytes pass the file's end");
      if (p.paddr + p.memsz < p.paddr) fail("rust-vmm MemoryOverflow", which + " wraps around");
      if (p.filesz > p.memsz) fail("QEMU ELF_LOAD_TOO_BIG", which + " has p_filesz > p_memsz");
      if (p.paddr < kHighMemoryStart)
        fail("below 1 MiB", which + " loads at " + hex(p.paddr) + ", where the VMMs put their boot data");
      if (p.align > 1 && p.offset % p.align != p.vaddr % p.align)
        fail("ELF congruence",
             which + ": p_offset " + hex(p.offset) + " and p_vaddr " + hex(p.vaddr) + " differ modulo p_align");
    }
    if (verdict_.load_segments == 0) fail("no PT_LOAD", "nothing to load");
  }

  // parse_elf_note, for each PT_NOTE in turn: the last one's answer is the loader's.
  std::optional<uint64_t> rust_vmm_pvh_entry() {
    std::optional<uint64_t> entry;
    for (const elf::Phdr& p : phdrs_) {
      if (p.type != elf::kPtNote) continue;
      entry.reset();
      uint64_t read_size = 0;
      bool found = false;
      elf::Nhdr n{};
      while (read_size < p.filesz) {
        uint64_t at = p.offset + read_size;
        if (!readable(at, sizeof(n)))
          return fail_none("rust-vmm ReadNoteHeader", "a note header passes the file's end");
        n = read<elf::Nhdr>(at);
        if (n.type == elf::kXenElfnotePhys32Entry && n.namesz == sizeof(elf::kXenNoteName)) {
          if (!readable(at + sizeof(n), 4)) return fail_none("rust-vmm ReadNoteHeader", "a note name passes the end");
          if (std::memcmp(file_.data() + at + sizeof(n), elf::kXenNoteName, 4) == 0) {
            found = true;
            break;
          }
        }
        read_size += sizeof(n) + ((uint64_t{n.namesz} + 3) & ~3ull) + ((uint64_t{n.descsz} + 3) & ~3ull);
      }
      if (!found) continue;  // PvhEntryNotPresent for this PT_NOTE
      if (n.descsz < 4)
        return fail_none("rust-vmm InvalidPvhNote", "descriptor of " + std::to_string(n.descsz) + " bytes");
      uint64_t desc = p.offset + read_size + sizeof(n) + ((uint64_t{n.namesz} + 3) & ~3ull);
      if (!readable(desc, 4)) return fail_none("rust-vmm ReadNoteHeader", "the descriptor passes the file's end");
      entry = read<uint32_t>(desc);
    }
    if (!entry) fail("rust-vmm PvhEntryNotPresent", "no \"Xen\" note of type 18 in the last PT_NOTE");
    return entry;
  }

  // load_elf's PT_NOTE search (get_elf_note_type) and read_pvh_start_addr: the last found wins.
  std::optional<uint64_t> qemu_pvh_entry() {
    std::optional<uint64_t> entry;
    for (const elf::Phdr& p : phdrs_) {
      if (p.type != elf::kPtNote || p.filesz == 0) continue;
      if (!readable(p.offset, p.filesz)) return fail_none("QEMU note", "a PT_NOTE passes the file's end");
      if (p.align == 0) return fail_none("QEMU note", "a PT_NOTE with p_align 0 (QEMU divides by it)");
      auto align = [&](uint64_t v) { return (v + p.align - 1) / p.align * p.align; };
      uint64_t at = p.offset, end = p.offset + p.filesz;
      std::optional<uint64_t> found;
      while (true) {
        if (at + sizeof(elf::Nhdr) > end) return fail_none("QEMU note", "the note search reads past its PT_NOTE");
        elf::Nhdr n = read<elf::Nhdr>(at);
        if (n.type == elf::kXenElfnotePhys32Entry) {
          uint64_t desc = at + sizeof(n) + align(n.namesz);
          if (desc + 8 > end) return fail_none("QEMU note", "the PVH descriptor's 8 bytes pass its PT_NOTE");
          found = read<uint64_t>(desc);
          break;
        }
        uint64_t next = sizeof(n) + align(n.namesz) + align(n.descsz);
        if (next > p.filesz) break;  // QEMU gives up: no note of that type
        at += next;
      }
      if (found) entry = found;
    }
    if (!entry || *entry == 0)
      return fail_none("QEMU PVH note", "\"Error loading uncompressed kernel without PVH ELF Note\"");
    if (*entry > 0xFFFFFFFFull)
      fail("QEMU PVH note", "entry " + hex(*entry) + " does not fit FW_CFG_KERNEL_ENTRY's 32 bits");
    return entry;
  }

  std::optional<uint64_t> fail_none(const std::string& rule, const std::string& what) {
    fail(rule, what);
    return std::nullopt;
  }

  bool in_loaded_bytes(uint64_t address) const {
    for (const elf::Phdr& p : phdrs_)
      if (p.type == elf::kPtLoad && address >= p.paddr && address - p.paddr < p.filesz) return true;
    return false;
  }

  std::span<const uint8_t> file_;
  elf::Ehdr ehdr_{};
  std::vector<elf::Phdr> phdrs_;
  VmmElfVerdict verdict_;
};

}  // namespace

bool VmmElfVerdict::violates(const std::string& rule) const {
  for (const std::string& v : violations)
    if (v.rfind(rule + ":", 0) == 0) return true;
  return false;
}

VmmElfVerdict check_vmm_elf(std::span<const uint8_t> file) { return Checker(file).run(); }

}  // namespace kpack::test
