#!/usr/bin/env python3
"""same_memory.py A B -- whether two ELF64 files put the same bytes in physical memory: each PT_LOAD's
file bytes at p_paddr, zeros from there to p_memsz (what every loader, and kpack's stub, does with
them). kpack extract's contract: the vmlinux it gives back loads as the one that was packed, however
the payload laid it out. Exit 0 when they do, 1 naming the first difference, 2 on a bad file."""
import struct
import sys


def memory_of(path):
    data = open(path, 'rb').read()
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        sys.exit(f"same_memory: {path}: not a little-endian ELF64 file")
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    loads = []
    for i in range(phnum):
        p_type, _, offset, _, paddr, filesz, memsz, _ = struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and memsz:
            if offset + filesz > len(data) or filesz > memsz:
                sys.exit(f"same_memory: {path}: PT_LOAD at {paddr:#x} lies outside the file")
            loads.append((paddr, data[offset:offset + filesz], memsz))
    if not loads:
        sys.exit(f"same_memory: {path}: no PT_LOAD")
    begin = min(paddr for paddr, _, _ in loads)
    end = max(paddr + memsz for paddr, _, memsz in loads)
    memory = bytearray(end - begin)
    for paddr, content, memsz in loads:
        memory[paddr - begin:paddr - begin + len(content)] = content
    return begin, memory


a_begin, a = memory_of(sys.argv[1])
b_begin, b = memory_of(sys.argv[2])
if (a_begin, len(a)) != (b_begin, len(b)):
    print(f"same_memory: {sys.argv[1]} loads at {a_begin:#x}+{len(a):#x}, {sys.argv[2]} at {b_begin:#x}+{len(b):#x}")
    sys.exit(1)
if a != b:
    first = next(i for i in range(len(a)) if a[i] != b[i])
    print(f"same_memory: {sys.argv[1]} and {sys.argv[2]} differ first at physical {a_begin + first:#x}")
    sys.exit(1)
print(f"same_memory: the same {len(a)} bytes at {a_begin:#x}")
