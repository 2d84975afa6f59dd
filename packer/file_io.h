// Whole-file reads and atomic writes: a failed run never leaves a partial output and never
// clobbers an existing one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "packer/result.h"

namespace kpack {

// Reads a regular file. Errors name the file: missing, unreadable, a directory, empty is allowed.
Result<std::vector<uint8_t>> read_file(const std::string& path);

// Writes `data` to a temporary file in the same directory, flushes it to disk, then renames it over
// `path`. On any failure (missing directory, full disk, ...) the temporary is removed and `path` is
// left as it was. `mode` is the permission of the new file.
Status write_file_atomically(const std::string& path, std::span<const uint8_t> data, unsigned mode = 0644);

}  // namespace kpack
