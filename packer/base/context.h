// What the phases of one command share instead of file-name parameters (mold's Context, kept
// small): a reader gets the file it reads as a FileView, its bytes with the name every message about
// it carries; a pack's phases get the Context, which names the kernel read and the image written,
// collects what is said after success, and times each phase for -v.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "packer/base/result.h"

namespace kpack {

struct FileView {
  std::span<const uint8_t> bytes;
  std::string_view name;

  Error error(const std::string& problem) const { return error_in(std::string(name), problem); }
  // The bytes [offset, offset + size) as a file of the same name (a payload inside an image).
  FileView part(uint64_t offset, uint64_t size) const { return {bytes.subspan(offset, size), name}; }
};

// -v's answer to "why did that pack take 5 s": the wall time of each phase, in one line.
class PhaseTimes {
 public:
  void end(const char* phase);
  const std::string& line() const { return line_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::string line_;
};

struct Context {
  std::string input;                  // the kernel (or image) read
  std::string output;                 // the image written
  std::string relocs_input;           // --relocs FILE: the kernel's relocation table, when given apart
  std::vector<std::string> warnings;  // one line each, said once the command has succeeded
  PhaseTimes times;

  Error about_input(const std::string& problem) const { return error_in(input, problem); }
  Error about_output(const std::string& problem) const { return error_in(output, problem); }
};

}  // namespace kpack
