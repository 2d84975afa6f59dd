// The text of kpack --version (packer/cli/version.cc).
#pragma once

#include <string>

namespace kpack {

std::string version_text();

}  // namespace kpack
