// kpack info: what an image is, how it is laid out, and where its kernel will run.
#pragma once

#include <cstdio>
#include <string>

#include "result.h"

namespace kpack {

Status print_info(const std::string& path, std::FILE* out);

}  // namespace kpack
