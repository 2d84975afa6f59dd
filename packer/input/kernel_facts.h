// What the image's header says about the kernel that its program headers do not: whether it runs
// with 5-level paging (XLF_5LEVEL_ENABLED, the record's kRecordKernelFiveLevel) and whether it accepts
// memory itself (kRecordKernelAcceptsMemory). Each comes with what settled it, because a vmlinux
// without symbols hides the first: a wrong guess either loses 5-level paging or starts a kernel in a
// mode it cannot run in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "packer/base/result.h"

namespace kpack {

struct KernelInput;

// What the user said about the kernel on the command line.
struct KernelHints {
  std::string config_path;         // --config FILE
  std::string system_map_path;     // --system-map FILE
  std::optional<bool> five_level;  // --5level, --no-5level
};

// An answer and where it came from, e.g. "its embedded configuration (CONFIG_PGTABLE_LEVELS=5)".
struct Finding {
  bool value = false;
  std::string source;
};

// Sets input.five_level_paging and input.accepts_memory, with their sources, for the kernel read
// from `path`. 5-level paging, first answer wins: `header` (a bzImage's XLF_5LEVEL_ENABLED), the
// vmlinux's symbol table (__pgtable_l5_enabled), its embedded configuration (IKCONFIG), the files
// named in `hints`, then a .config, config-RELEASE, System.map or System.map-RELEASE beside `path`.
// --no-5level overrides the answer; --5level too, unless the answer is no. A named file that does
// not belong to the kernel, or that contradicts an earlier answer, is an error; a file beside it
// that does not belong is passed over (input.findings says so).
Status infer_kernel_facts(KernelInput& input, const std::string& path, const KernelHints& hints,
                          std::optional<Finding> header);

}  // namespace kpack
