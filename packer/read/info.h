// kpack info: what an image is, how it is laid out, and where its kernel will run.
#pragma once

#include <cstdio>
#include <span>
#include <string>

#include "packer/codecs/codecs.h"
#include "packer/read/placement_report.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

// Reads the file at `path` and describes it.
Status print_info(const std::string& path, std::FILE* out);

// What a test or fuzzer may bound: the decoded payload and the simulated machine's RAM.
struct InfoLimits {
  uint64_t max_decoded = kMaxDecodedBytes;
  uint64_t ram_size = kPlacementRamSize;
};

// The whole of `kpack info` on an image's bytes.
Status print_image_info(const FileView& file, std::FILE* out, const InfoLimits& limits = {});

}  // namespace kpack
