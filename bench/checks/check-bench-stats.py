#!/usr/bin/env python3
"""check-bench-stats.py BENCHMARKS.md — the statistics rules of bench/README.md that a reader can
check on the written file, each failure named with its line:

  1. a spread (±) is written only with the n it came from, and only for n >= 3: `1486.4 ±0.5 (n=3)`;
  2. every target's reference is the same kernel as kpack's figure, and a reference that is a stock
     image or a codec's tool is of kpack's own codec (`6.1 kpack xz` against `6.1 stock xz`, never
     against the stock lz4 image).
Exit 0 when both hold, 1 otherwise.
"""
import re
import sys

CODECS = ("raw", "gzip", "lz4", "zstd", "xz")
MIN_SPREAD_N = 3


def codecs_in(text):
    return {c for c in CODECS if re.search(rf"(?<![\w-]){c}(?![\w-])", text)}


def logical(lines):
    """(first line number, text): table rows and code lines alone, a prose paragraph joined, so that
    a figure wrapped over two lines is read whole."""
    para, start = [], 0
    for number, line in enumerate(lines + [""], 1):
        if line.strip() and not line.startswith(("|", "#", "```")):
            if not para:
                start = number
            para.append(line.strip())
            continue
        if para:
            yield start, " ".join(para)
            para = []
        if line.strip():
            yield number, line


def spreads(lines):
    for number, line in logical(lines):
        for m in re.finditer(r"±", line):
            tail = line[m.start():]
            found = re.match(r"±<?[\d.]+ \(n=(\d+)\)", tail)
            if not found:
                yield f"line {number}: a spread without its n: {tail[:30]!r}"
            elif int(found.group(1)) < MIN_SPREAD_N:
                yield f"line {number}: a spread from n={found.group(1)} (< {MIN_SPREAD_N}): {tail[:30]!r}"


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def targets(lines):
    try:
        start = lines.index("## Targets")
    except ValueError:
        yield "no '## Targets' section"
        return
    rows = [line for line in lines[start:] if line.startswith("|")]
    if not rows:
        return
    head = cells(rows[0])
    if "kpack" not in head or "reference" not in head:
        yield f"line {start + 1}: the targets table names no kpack and reference columns (header {head})"
        return
    k, ref = head.index("kpack"), head.index("reference")
    for row in rows[2:]:
        number = lines.index(row, start) + 1
        c = cells(row)
        mine, theirs = c[k], c[ref]
        if mine.split()[:1] != theirs.split()[:1]:
            yield f"line {number}: '{c[0]}' holds {mine!r} against another kernel's figure, {theirs!r}"
        own = codecs_in(mine)
        other = codecs_in(theirs)
        if "stock" in theirs.split() and not other:
            yield f"line {number}: '{c[0]}' names a stock image without its codec: {theirs!r}"
        elif other and other != own and not re.search(r"(?<![\w-])raw(-compact)?(?![\w-])", mine):
            # Raw has no stock image of its own: its targets are against the stock image, whatever
            # its codec (Debian's: lz4), or against PVH.
            yield f"line {number}: '{c[0]}' holds {mine!r} against another codec's figure, {theirs!r}"


def main():
    path = sys.argv[1]
    lines = open(path).read().splitlines()
    problems = list(spreads(lines)) + list(targets(lines))
    for p in problems:
        print(f"check-bench-stats: {path}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
