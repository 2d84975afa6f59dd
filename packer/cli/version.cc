// kpack --version: kpack's own version and the codec libraries it was built with. The stub links
// the static archives of the very same -dev packages, so the built-with versions are also what the
// stub decodes with. The packer runs on the shared zlib, zstd and xz libraries (lz4 is linked in
// statically), whose running versions are shown when a later package upgrade made them differ.
#include "packer/cli/version.h"

#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

namespace kpack {

namespace {

std::string library(const char* name, const std::string& built, const std::string& running) {
  std::string text = std::string(name) + " " + built;
  if (running != built) text += " (running " + running + ")";
  return text;
}

}  // namespace

std::string version_text() {
  return std::string("kpack ") + KPACK_VERSION + "\n" +
         "codecs (stub and packer): " + library("zlib", ZLIB_VERSION, zlibVersion()) + ", " +
         library("lz4", LZ4_VERSION_STRING, LZ4_versionString()) + ", " +
         library("zstd", ZSTD_VERSION_STRING, ZSTD_versionString()) + ", " +
         library("liblzma", LZMA_VERSION_STRING, lzma_version_string()) + "\n";
}

}  // namespace kpack
