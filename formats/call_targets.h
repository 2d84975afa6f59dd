// Call targets coded: what a frame of machine code may hold instead of its bytes (FrameEntry::coding
// kCallTargets, formats/kpack_image.h). The packer codes the frame's bytes before compressing them,
// the stub and `kpack extract` decode them in place after decompressing. Both run the same scan.
//
// An x86 `call rel32` (E8) or `jmp rel32` (E9) stores its target as a distance from the next
// instruction, so every call of one function has different bytes. Coded, the distance becomes the
// target itself, the same bytes at every call, which the codecs then find as repeats (what it
// saves and costs: doc/benchmark-history.md, "Call targets coded").
//
// The scan goes forward from the frame's first byte. Each E8 or E9 byte it meets is taken as an
// opcode and its next 4 bytes as the operand, which the scan then steps over, coded or not, so
// the coder and the decoder stop at the same bytes whatever the operands hold. An operand whose
// top byte is 0x00 or 0xFF (a distance within 16 MiB: a real call, in all likelihood) is coded;
// the others are left. Positions are the frame's place in the payload's ELF file, so a function
// called from two frames gets the same coded value in both, and values are kept to 25 bits,
// sign-extended, so a coded operand's top byte is 0x00 or 0xFF too, and decoding finds it again.
#pragma once

#include <stdint.h>

#include "formats/kpack_image.h"
#include "formats/le.h"
#include "formats/sse2.h"

namespace kpack {

inline constexpr uint32_t kCallOperandSize = 4;
inline constexpr uint32_t kCallInstructionSize = 1 + kCallOperandSize;

// v's low 25 bits, sign-extended from bit 24: a value whose top byte is 0x00 or 0xFF.
constexpr uint32_t call_target_bits(uint32_t v) {
  constexpr uint32_t kSign = 1u << 24;
  return ((v & (2 * kSign - 1)) ^ kSign) - kSign;
}
static_assert(call_target_bits(0x00ffffff) == 0x00ffffff && call_target_bits(0x01ffffff) == 0xffffffff);
static_assert(call_target_bits(0x01000000) == 0xff000000);
static_assert(call_target_bits(0x02000005) == 5 && call_target_bits(0xfe000000) == 0);

enum class CallTargets : bool { kCode, kDecode };

// One opcode at bytes[at], its operand inside the frame: coded or decoded when it is a near one.
template <CallTargets kDirection>
inline void convert_call_target(uint8_t* bytes, uint64_t at, uint64_t position) {
  uint8_t* operand = bytes + at + 1;
  if (operand[3] != 0x00 && operand[3] != 0xFF) return;
  uint32_t next = static_cast<uint32_t>(position + at + kCallInstructionSize);
  uint32_t value = load_le<uint32_t>(operand);
  store_le<uint32_t>(operand, call_target_bits(kDirection == CallTargets::kCode ? value + next : value - next));
}

// Codes or decodes bytes [0, size) of a frame that starts at `position` in the payload's ELF file.
// Sixteen bytes at a time (SSE2, which every x86-64 CPU has): a mask of the bytes that are E8 or
// E9 ((b | 1) == E9), whose opcodes are taken lowest first, each clearing the mask up to the end
// of its operand: the codes are rare enough in code that most blocks cost a handful of instructions.
template <CallTargets kDirection>
inline void convert_call_targets(uint8_t* bytes, uint64_t size, uint64_t position) {
  constexpr uint64_t kBlock = 16;
  const __m128i low_bit = _mm_set1_epi8(1), call_or_jump = _mm_set1_epi8(static_cast<char>(0xE9));
  uint64_t i = 0;
  while (size - i >= kBlock + kCallOperandSize) {  // every opcode in the block has its operand
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
    __m128i is_opcode = _mm_cmpeq_epi8(_mm_or_si128(block, low_bit), call_or_jump);
    uint32_t opcodes = static_cast<uint32_t>(_mm_movemask_epi8(is_opcode));
    uint64_t next = i;
    while (opcodes) {
      uint64_t at = i + static_cast<uint64_t>(__builtin_ctz(opcodes));
      convert_call_target<kDirection>(bytes, at, position);
      next = at + kCallInstructionSize;
      opcodes = next - i >= kBlock ? 0 : opcodes & (~0u << (next - i));
    }
    i = next > i + kBlock ? next : i + kBlock;  // past the block, or past an operand it ends in
  }
  while (size - i >= kCallInstructionSize) {  // i never passes size
    if ((bytes[i] | 1) != 0xE9) {
      ++i;
      continue;
    }
    convert_call_target<kDirection>(bytes, i, position);
    i += kCallInstructionSize;
  }
}

inline void code_call_targets(uint8_t* bytes, uint64_t size, uint64_t position) {
  convert_call_targets<CallTargets::kCode>(bytes, size, position);
}
inline void decode_call_targets(uint8_t* bytes, uint64_t size, uint64_t position) {
  convert_call_targets<CallTargets::kDecode>(bytes, size, position);
}

// Frame `f`'s decoded bytes [0, f.size) back to the kernel's, whatever its coding: the one place
// that maps FrameEntry::coding to its undoing, for the stub, `kpack extract` and the host tools.
inline void undo_frame_coding(const FrameEntry& f, uint8_t* bytes) {
  if (f.coding == static_cast<uint64_t>(FrameCoding::kCallTargets)) decode_call_targets(bytes, f.size, f.file_offset);
}

}  // namespace kpack
