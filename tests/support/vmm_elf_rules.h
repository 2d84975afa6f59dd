// The rules the VMMs' ELF loaders apply to a kernel file, replayed on the host: what CI checks on
// every ELF kpack writes, since Firecracker and Cloud Hypervisor need KVM, which CI lacks.
//
//   - rust-vmm/linux-loader src/loader/elf/mod.rs (Firecracker, Cloud Hypervisor): Elf::load with
//     no kernel_offset and the VMM's high memory start (1 MiB: Firecracker's HIMEM_START, Cloud
//     Hypervisor's HIGH_RAM_START): validate_header, the e_entry check, each PT_LOAD with file
//     bytes, and parse_elf_note on each PT_NOTE, the last one's answer winning;
//   - QEMU -kernel (hw/i386/x86-common.c x86_load_linux and load_elfboot, include/hw/elf_ops.h.inc
//     load_elf and get_elf_note_type, read_pvh_start_addr): what sends the file down another path
//     ("HdrS", a multiboot header), the flags it refuses, and the note found by type alone, its
//     descriptor read as 8 bytes after the name aligned to the PT_NOTE's p_align.
//
// Plus what both need of the file to boot at all: the entries lie in loaded bytes, nothing loads
// below 1 MiB (where the VMMs put hvm_start_info, boot_params and the command line), and each
// PT_LOAD's offset is congruent to its address modulo p_align, as the ELF specification asks.
// Independent of the packer's reader: it parses the bytes itself, as the loaders do.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kpack::test {

struct VmmElfVerdict {
  // Each "rule: what is wrong", the rule named after the loader's error where it has one
  // ("rust-vmm Align", "QEMU multiboot"); empty when every loader would take the file.
  std::vector<std::string> violations;
  uint64_t entry = 0;      // e_entry: Firecracker's 64-bit boot protocol entry without PVH
  uint64_t pvh_entry = 0;  // as rust-vmm reads it (QEMU's must agree)
  uint32_t load_segments = 0;

  bool ok() const { return violations.empty(); }
  bool violates(const std::string& rule) const;  // a violation starts with `rule`
};

VmmElfVerdict check_vmm_elf(std::span<const uint8_t> file);

}  // namespace kpack::test
