#!/usr/bin/env python3
"""make_cases.py OUT_DIR — write the malformed vmlinux files of the bad-input table.

Each case is a small valid kernel ELF with one thing broken. OUT_DIR/cases.tsv lists them as
"file<TAB>regex the error line must match"; run.sh feeds each file to kpack.
"""
import os
import struct
import sys

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
PHDR = struct.Struct("<IIQQQQQQ")          # Elf64_Phdr: type flags offset vaddr paddr filesz memsz align
PT_LOAD, PF_X, PF_W, PF_R = 1, 1, 2, 4
KERNEL_MAP = 0xFFFFFFFF80000000


def segment(offset, paddr, filesz, memsz, flags):
    return dict(type=PT_LOAD, flags=flags, offset=offset, vaddr=paddr + KERNEL_MAP, paddr=paddr,
                filesz=filesz, memsz=memsz, align=0x200000)


def base():
    """A kernel-shaped ELF: text, data with bss, init; one page of headers, then the segments."""
    return dict(ident=b"\x7fELF\x02\x01\x01" + bytes(9), type=2, machine=62, entry=0x1000000, phoff=64,
                phnum=None, segments=[segment(0x1000, 0x1000000, 0x1000, 0x1000, PF_R | PF_X),
                                      segment(0x2000, 0x1200000, 0x800, 0x2000, PF_R | PF_W),
                                      segment(0x3000, 0x1203000, 0x400, 0x400, PF_R | PF_W | PF_X)])


def build(elf):
    segs = elf["segments"]
    phnum = len(segs) if elf["phnum"] is None else elf["phnum"]
    out = bytearray(0x3400)  # the end of the base layout's last segment, whatever a variant claims
    EHDR.pack_into(out, 0, elf["ident"], elf["type"], elf["machine"], 1, elf["entry"], elf["phoff"], 0, 0,
                   64, 56, phnum, 64, 0, 0)
    for i, s in enumerate(segs):
        if elf["phoff"] + 56 * (i + 1) <= len(out):
            PHDR.pack_into(out, elf["phoff"] + 56 * i, s["type"], s["flags"], s["offset"], s["vaddr"],
                           s["paddr"], s["filesz"], s["memsz"], s["align"])
    for s in segs:  # recognisable bytes in each segment
        if s["offset"] < len(out):
            end = min(len(out), s["offset"] + s["filesz"])
            out[s["offset"]:end] = bytes((s["paddr"] >> 12) & 0xFF for _ in range(end - s["offset"]))
    return bytes(out)


def variant(**changes):
    elf = base()
    for key, value in changes.items():
        if key.startswith("seg"):  # seg1_paddr=...: field of segment 1
            index, field = key[3:].split("_", 1)
            elf["segments"][int(index)][field] = value
        else:
            elf[key] = value
    return build(elf)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    good = build(base())
    cases = [
        ("empty.elf", b"", "empty file"),
        ("not-an-elf.txt", b"this is not a kernel\n" * 64, "is text, not a vmlinux ELF or a bzImage"),
        ("truncated-ehdr.elf", good[:40], "file truncated: 40 of 64 bytes"),
        ("elfclass32.elf", variant(ident=b"\x7fELF\x01\x01\x01" + bytes(9)), "not a 64-bit ELF"),
        ("big-endian.elf", variant(ident=b"\x7fELF\x02\x02\x01" + bytes(9)), "not a little-endian ELF"),
        ("i386.elf", variant(machine=3), "not an x86-64 ELF"),
        ("et-dyn.elf", variant(type=3), "not an executable ELF"),
        ("phnum-0.elf", variant(phnum=0), "bad e_phnum"),
        ("phnum-65535.elf", variant(phnum=65535), "bad e_phnum"),
        ("phdrs-outside-file.elf", variant(phoff=0x100000), "file truncated"),
        ("segment-past-end.elf", variant(seg1_offset=0x3300), "file truncated"),
        ("segment-offset-wraps.elf", variant(seg1_offset=0xFFFFFFFFFFFFF000, seg1_filesz=0x2000),
         "file range wraps around"),
        ("filesz-over-memsz.elf", variant(seg0_memsz=0x800), "p_filesz exceeds p_memsz"),
        ("overlap-in-file.elf", variant(seg1_offset=0x1800), "segments overlap in the file"),
        ("overlap-in-memory.elf", variant(seg1_paddr=0x1000800), "segments overlap in memory"),
        ("below-1mib.elf", variant(seg1_paddr=0x80000), "segment below 1 MiB"),
        ("above-4gib.elf", variant(seg2_paddr=0x100000000), "segment above 4 GiB"),
        ("paddr-wraps.elf", variant(seg2_paddr=0xFFFFFFFFFFFFF000, seg2_memsz=0x2000), "physical range wraps"),
        ("entry-outside.elf", variant(entry=0x5000000), "e_entry must lie in a PT_LOAD segment's memory"),
    ]
    # Cut at every header boundary and inside each segment's bytes: the error gives both sizes.
    headers_end = 64 + 56 * 3
    cases.append(("truncated-at-ehdr-end.elf", good[:64], f"file truncated: 64 of {headers_end} bytes"))
    for i in range(3):
        cut = 64 + 56 * i + 28
        cases.append((f"truncated-in-phdr{i}.elf", good[:cut], f"file truncated: {cut} of {headers_end} bytes"))
        cut = 64 + 56 * (i + 1)
        claimed = headers_end if i < 2 else len(good)
        cases.append((f"truncated-after-phdr{i}.elf", good[:cut], f"file truncated: {cut} of {claimed} bytes"))
    for i, s in enumerate(base()["segments"]):
        cut = s["offset"] + s["filesz"] // 2
        cases.append((f"truncated-in-segment{i}.elf", good[:cut], f"file truncated: {cut} of {len(good)} bytes"))
    with open(os.path.join(out_dir, "cases.tsv"), "w") as table:
        for name, data, expected in cases:
            with open(os.path.join(out_dir, name), "wb") as f:
                f.write(data)
            table.write(f"{name}\t{expected}\n")
    with open(os.path.join(out_dir, "good.elf"), "wb") as f:
        f.write(good)
    # Valid, but its segments span 3.7 GiB: what a raw image would have to store.
    with open(os.path.join(out_dir, "huge-span.elf"), "wb") as f:
        f.write(variant(seg2_paddr=0xF0000000))


if __name__ == "__main__":
    main()
