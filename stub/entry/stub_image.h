// The stub's own image as an entry first meets it: the packer's record after it, checked before
// anything uses it, and the stub's relocations for where the loader put it. Every entry does each
// exactly once, and counts it in its BootInputs. Both run before relocation: like identity_map.cc
// they hold no absolute relocation (the build checks).
#pragma once

#include "stub/base/status.h"
#include "stub/entry/boot_inputs.h"

namespace kpack {

// The record at the stub's end, checked for the image at inputs->image_base; into
// inputs->packer_record when whole.
StubStatus take_packer_record(BootInputs* inputs);

// Applies the stub's R_X86_64_RELATIVE relocations for inputs->image_base, then runs the codec
// libraries' static constructors.
void relocate_stub(BootInputs* inputs);

}  // namespace kpack
