// What the fuzzers of packer readers (fuzz_bzimage, fuzz_kpack_elf) demand of every input: errors
// of one line that start with the file's name, a payload that splits into the ELF and its
// relocations, and a `kpack info` report that never crashes nor claims the engine wrote over the
// live image or put the kernel somewhere unacceptable. Their cases: fuzz_bzimage's self-test.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "fuzz/fuzz_check.h"
#include "packer/input/bzimage_reader.h"
#include "packer/read/info.h"

namespace kpack {

inline void check_message(const Error& error, const std::string& name) {
  FUZZ_CHECK(error.message.rfind(name + ": ", 0) == 0);
  FUZZ_CHECK(error.message.find('\n') == std::string::npos);
}

// extract_kernel as `kpack extract` and repacking call it: the ELF it splits off is exactly its
// extent, and the whole payload stays within the bound the fuzzer gave.
inline void check_split(const Result<KernelPayload>& payload, const std::string& name, uint64_t max_decoded) {
  if (!payload) return check_message(payload.error(), name);
  Result<uint64_t> extent = elf_file_extent({payload.value().elf, name});
  FUZZ_CHECK(extent.ok() && *extent == payload.value().elf.size());
  FUZZ_CHECK(payload.value().elf.size() + payload.value().relocation_table.size() <= max_decoded);
}

// What the placement report must never say of where the engine put the kernel.
inline void check_report(const std::string& printed) {
  FUZZ_CHECK(printed.find("WROTE OVER THE LIVE IMAGE") == std::string::npos);
  FUZZ_CHECK(printed.find("KERNEL ADDRESS NOT ACCEPTABLE") == std::string::npos);
}

// The report's text goes nowhere: only producing it, and what it must never say, matter. A stream
// that grows: the whole report is checked, however long (a PE view of a thousand sections).
inline void check_info(std::span<const uint8_t> file, const std::string& name, const InfoLimits& limits) {
  char* text = nullptr;
  size_t length = 0;
  std::FILE* out = open_memstream(&text, &length);
  FUZZ_REQUIRE(out != nullptr);
  Status status = print_image_info({file, name}, out, limits);
  std::fclose(out);
  std::string printed(text, length);
  std::free(text);
  if (!status) return check_message(status.error(), name);
  check_report(printed);
}

}  // namespace kpack
