// Reads and validates a vmlinux's ELF header and program headers. Shared by the stub (which sees
// only the headers, decoded from the first payload frame) and the packer (which sees the file).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "stub/base/range.h"
#include "stub/base/status.h"

namespace kpack {

inline constexpr uint32_t kMaxProgramHeaders = 64;
inline constexpr uint32_t kMaxLoadSegments = 16;
inline constexpr uint64_t kLowestSegmentAddress = 0x100000;  // nothing of a kernel lives below 1 MiB
inline constexpr uint64_t kHighestSegmentEnd = 1ull << 32;   // the stub maps and places below 4 GiB
inline constexpr uint64_t kMinKernelAlignment = 0x200000;    // head_64.S insists on 2 MiB

struct LoadSegment {
  uint64_t offset;  // in the ELF file
  uint64_t paddr;
  uint64_t vaddr;
  uint64_t filesz;
  uint64_t memsz;
  uint64_t align;
  uint32_t flags;
};

struct KernelHeaders {
  LoadSegment segments[kMaxLoadSegments];  // sorted by file offset
  uint32_t segment_count = 0;
  uint64_t entry = 0;        // physical, from e_entry
  uint64_t alignment = 0;    // of the lowest segment, at least 2 MiB
  Range physical;            // lowest paddr .. highest paddr + memsz
  uint64_t headers_end = 0;  // end of ehdr + phdrs in the file
  uint64_t file_end = 0;     // end of the last segment's bytes in the file

  uint64_t span() const { return physical.size(); }
};

// `bytes` holds at least the start of the file (the ELF header and program headers must be in it).
// `file_size` bounds every segment's file range (UINT64_MAX when the stream length is unknown).
StubStatus parse_kernel_headers(const uint8_t* bytes, uint64_t size, uint64_t file_size, KernelHeaders* out);

// True when every segment's file offset mirrors its physical address, so the segments sit at their
// run addresses relative to each other just by loading the file.
bool is_physically_mirrored(const KernelHeaders& kernel);

// True when the segments lie in the file in physical order, each no farther from the first than in
// memory (a raw payload with the zeros between segments left out): moving each one up, the highest
// first, to its distance from the first puts them where they run without overwriting one not yet moved.
bool is_physically_ordered(const KernelHeaders& kernel);

}  // namespace kpack
