// Whole-file reads and atomic writes: a failed run never leaves a partial output and never
// clobbers an existing one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "packer/base/result.h"

namespace kpack {

// Reads a regular file. Errors name the file: missing, unreadable, a directory, empty is allowed.
Result<std::vector<uint8_t>> read_file(const std::string& path);

// An output in the making: a temporary file beside `path`, created by open() so that a missing,
// read-only or pseudo (/proc) directory, or a `path` that is a directory, is an error before any
// work; commit() writes the data, flushes it to disk and renames it over `path`. On any failure,
// and when the object goes away uncommitted (or SIGINT, SIGTERM or SIGHUP ends the process), the
// temporary is removed and `path` is left as it was.
class OutputFile {
 public:
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();
  // `mode` is the permission of the new file.
  Status commit(std::span<const uint8_t> data, unsigned mode);

 private:
  OutputFile(std::string path, std::string dir, std::string temp, int fd, int slot);
  std::string path_, dir_, temp_;
  int fd_ = -1;
  int slot_ = -1;  // its place among the temporaries a signal removes
};

// OutputFile::open(path), then commit(data, mode): the whole write in one call.
Status write_file_atomically(const std::string& path, std::span<const uint8_t> data, unsigned mode = 0644);

}  // namespace kpack
