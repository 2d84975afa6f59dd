// kpack info: what an image is, how it is laid out, and where its kernel will run.
#pragma once

#include <cstdio>
#include <span>
#include <string>

#include "packer/codecs.h"
#include "packer/placement_report.h"
#include "packer/result.h"

namespace kpack {

// Reads the file at `path` and describes it.
Status print_info(const std::string& path, std::FILE* out);

// What a test or fuzzer may bound: the decoded payload and the simulated machine's RAM.
struct InfoLimits {
  uint64_t max_decoded = kMaxDecodedBytes;
  uint64_t ram_size = kPlacementRamSize;
};

// The whole of `kpack info` on the bytes of an image; `name` is the file, for messages.
Status print_image_info(std::span<const uint8_t> file, const std::string& name, std::FILE* out,
                        const InfoLimits& limits = {});

}  // namespace kpack
