// How a raw payload's ELF reads back: the pieces its segments were cut into where long zero runs
// were left out (image/layout.h writes them), joined again for `kpack extract`, and whether its
// segments mirror physical memory (`kpack info`).
#pragma once

#include <cstdint>
#include <vector>

#include "stub/unpack/kernel_headers.h"

namespace kpack {

// The inverse for `kpack extract`: a raw payload's ELF with every segment's pieces (InnerZeros::
// kLeftOut) joined again into one PT_LOAD, the zeros between them stored, so the vmlinux read back
// has the program headers it was packed from. Pieces are the PT_LOADs that continue the one before
// them in memory (physical and virtual), with its flags and a 4 KiB p_align; an ELF without such
// pieces comes back unchanged, and so does one whose joined file would pass `max_size` bytes.
std::vector<uint8_t> join_left_out_zeros(std::vector<uint8_t> elf, uint64_t max_size);

// Whether segment `i` of a raw payload's headers is a piece continuing the one before it, and
// the zero bytes left out between pieces (`runs` gets how many places).
bool continues_piece(const KernelHeaders& kernel, uint32_t i);
uint64_t left_out_zeros(const KernelHeaders& kernel, uint32_t* runs);

// Whether every segment lies as far from the first in the file as in physical memory (what
// layout_mirrored writes; a kernel of one segment always does).
bool mirrors_physical(const KernelHeaders& kernel);

}  // namespace kpack
