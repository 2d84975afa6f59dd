// The kernel to pack: a vmlinux ELF read from a file, or the one inside any bzImage.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stub/unpack/kernel_headers.h"
#include "packer/input/kernel_facts.h"
#include "packer/base/context.h"
#include "packer/base/result.h"
#include "packer/codecs/codecs.h"

namespace kpack {

// Where KernelInput::relocation_table came from, in order of precedence.
enum class RelocsOrigin {
  kNone,        // no table: the image can randomize only the physical address
  kFile,        // kpack --relocs FILE
  kStockImage,  // the table after the ELF in the input bzImage's payload
  kComputed,    // computed from the vmlinux's .rela.* sections (relocs_from_elf.h)
};

struct KernelInput {
  std::vector<uint8_t> elf;
  std::vector<uint8_t> relocation_table;  // the kernel's relocation table (formats/relocation_table.h), after the ELF
  RelocsOrigin relocs_origin = RelocsOrigin::kNone;
  KernelHeaders kernel;                  // parsed and validated program headers
  std::optional<uint32_t> cmdline_size;  // from the source bzImage, when there was one
  std::optional<std::string> version;    // for the header's kernel_version string
  bool was_signed = false;               // the source bzImage carried an Authenticode signature
  // The payload format of the image the kernel came from (a stock or kpack bzImage, a kpack ELF);
  // none for a vmlinux. The default codec follows it (default_codec.h).
  std::optional<StreamFormat> source_format;
  // The kernel runs with 5-level paging where the CPU has it (kernel_facts.h), and what said so:
  // empty when nothing did, and the image gets 4 levels, which every x86-64 kernel runs with.
  bool five_level_paging = false;
  std::string five_level_source;
  // CONFIG_UNACCEPTED_MEMORY: the kernel accepts memory itself (kernel_accepts_memory).
  bool accepts_memory = false;
  // The kernel's .bss and .brk, whole pages as offsets from its lowest physical address: the
  // kernel clears them itself (clear_bss), so the stub need not (PackerRecord::bss_page). Empty
  // when the ELF has no section headers to say (`kpack extract` drops them).
  Range cleared_by_kernel;
  // What was found out about the kernel and where, one line each, for kpack -v.
  std::vector<std::string> findings;
};

// Whether the kernel was built with CONFIG_UNACCEPTED_MEMORY: only then does it look for Linux's
// unaccepted memory table (drivers/firmware/efi/efi.c), so only then does its image hold the
// table's GUID. Debian's 6.12 cloud kernel does; 6.1 predates the table.
bool kernel_accepts_memory(std::span<const uint8_t> elf);

// Validates an ELF held in memory.
Result<KernelHeaders> parse_vmlinux(const FileView& elf);

// Validates `elf` and wraps it, with no relocations, version or command-line size yet.
// `name` is the file it came from, for messages.
Result<KernelInput> kernel_input_from_elf(std::vector<uint8_t> elf, std::string_view name);

// Reads the context's input: a vmlinux, or a bzImage (stock or kpack) whose kernel is extracted. The
// relocation table is, in order: the context's relocs_input when not empty (its shape checked, and its format
// against the kernel's version when the kernel has a banner), the one in the bzImage's payload,
// the one computed from the ELF's .rela.* sections, or none (relocs_origin says which). What the
// header says about the kernel comes from infer_kernel_facts, with `hints`.
Result<KernelInput> load_kernel(const Context& ctx, const KernelHints& hints = {});
// The same for `file`, the bytes of the context's input (fuzz/fuzz_pack.cc packs from memory).
Result<KernelInput> load_kernel_from(const Context& ctx, std::vector<uint8_t> file, const KernelHints& hints = {});

}  // namespace kpack
