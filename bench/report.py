#!/usr/bin/env python3
"""report.py OUT TAG... — turn bench/run.sh's raw results into OUT/report.md and OUT/prekernel.svg.

Reads OUT/machine.txt, icount.tsv, wall.tsv, sizes.tsv, pack.tsv, TAG/host.txt and the stub's
`kpack:` lines from TAG/IMAGE.icount0.log; any missing part is left out of the report.
"""
import os
import re
import statistics
import sys
from collections import defaultdict

IMAGES = ["pvh", "raw", "lz4", "zstd", "gzip", "stock"]
STOCK_CODEC = {"6.1": "lz4", "6.12": "zstd"}


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def mega(n):
    return f"{n / 1e6:.1f}"


def phases(out, tag, image):
    """The stub's phase lines, condensed: instructions per phase under -icount."""
    path = os.path.join(out, tag, f"{image}.icount0.log")
    if image in ("pvh", "stock") or not os.path.exists(path):
        return ""
    parts, total = [], None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"kpack: (\w[\w ]*) bytes=\d+ cycles=(\d+)", line)
            if m and int(m.group(2)) > 100_000:
                parts.append(f"{m.group(1)} {mega(int(m.group(2)))}")
            m = re.search(r"total cycles=(\d+)", line)
            if m:
                total = int(m.group(1))
    return ("stub " + mega(total) + " M" + (": " + ", ".join(parts) if parts else "")) if total else ""


def guest(out, tags, lines, targets):
    icount = defaultdict(list)
    for tag, image, _, tsc in rows(os.path.join(out, "icount.tsv")):
        icount[tag, image].append(int(tsc))
    wall = defaultdict(list)
    for tag, image, _, s in rows(os.path.join(out, "wall.tsv")):
        wall[tag, image].append(float(s))
    if not icount:
        return {}
    costs = {}
    lines.append("## Guest: pre-kernel cost\n")
    lines.append("TSC at /init under `-icount shift=0,sleep=off` (guest instructions, median of "
                 f"{len(icount[tags[0], 'pvh'])} boots); cost = that minus PVH's. Wall: QEMU start to "
                 f"the /init marker without -icount, median of {len(wall[tags[0], 'pvh'])} interleaved rounds.\n")
    for tag in tags:
        if (tag, "pvh") not in icount:
            continue
        floor = statistics.median(icount[tag, "pvh"])
        stock_cost = statistics.median(icount[tag, "stock"]) - floor
        wall_floor = statistics.median(wall[tag, "pvh"]) if wall[tag, "pvh"] else None
        lines.append(f"### {tag} cloud kernel (stock codec: {STOCK_CODEC.get(tag, '?')})\n")
        lines.append("| image | TSC at /init (M) | pre-kernel cost (M instr) | cost / stock | "
                     "wall (s) | wall / PVH | stub phases (M instr) |")
        lines.append("|---|---:|---:|---:|---:|---:|---|")
        for image in IMAGES:
            if (tag, image) not in icount:
                continue
            tsc = statistics.median(icount[tag, image])
            cost = tsc - floor
            costs[tag, image] = cost
            w = statistics.median(wall[tag, image]) if wall[tag, image] else None
            spread = max(icount[tag, image]) - min(icount[tag, image])
            lines.append(f"| {image} | {mega(tsc)} ±{spread / 2e6:.1f} | {cost / 1e6:+.1f} | "
                         f"{cost / stock_cost:.2f} | " + (f"{w:.2f} | {w / wall_floor:.3f}" if w and wall_floor else "– | –")
                         + f" | {phases(out, tag, image)} |")
        lines.append("")
        raw = costs.get((tag, "raw"))
        if raw is not None:
            targets.append((f"{tag}: kpack raw within 2 M instructions of PVH", raw <= 2e6, f"{raw / 1e6:+.1f} M"))
        own = STOCK_CODEC.get(tag)
        if (tag, own) in costs:
            c = costs[tag, own]
            targets.append((f"{tag}: kpack {own} ≤ half the stock image's cost", c <= stock_cost / 2,
                            f"{c / 1e6:.1f} M vs stock {stock_cost / 1e6:.1f} M ({c / stock_cost:.2f}×)"))
    return costs


def host(out, tags, lines, targets):
    first = True
    for tag in tags:
        path = os.path.join(out, tag, "host.txt")
        if not os.path.exists(path):
            continue
        if first:
            lines.append("## Host: engine vs library decode vs stock-shaped pipeline\n")
            lines.append("`kpack_host_bench` (one thread, warm buffers, median thread-CPU ms). eng/lib and eng/stk are "
                         "throughput ratios (>1: the engine is faster). moved: bytes the engine copied "
                         "besides decoder output.\n")
            first = False
        lines.append(f"### {tag}\n")
        lines.append("| codec | image bytes | segment bytes | engine ms | library ms | stock ms | memcpy ms | "
                     "eng/lib | eng/stk | moved | output |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        with open(path) as f:
            for line in f:
                if not line.strip():
                    break  # what follows is the verification table (host.txt keeps it), not this one
                if line.startswith("#") or line.startswith("codec"):
                    continue
                c = line.split()
                lines.append("| " + " | ".join(c) + " |")
                if c[0] != "raw":
                    targets.append((f"{tag}: host engine ≥ 0.95× library, > stock ({c[0]})",
                                    float(c[7]) >= 0.95 and float(c[8]) > 1.0, f"{c[7]}× / {c[8]}×"))
                targets.append((f"{tag}: engine copies nothing besides decoder output ({c[0]})", c[9] == "0",
                                f"moved {c[9]}"))
        lines.append("")


def sizes_and_pack(out, tags, lines, targets):
    size = {(t, i): int(b) for t, i, b in rows(os.path.join(out, "sizes.tsv"))}
    if size:
        lines.append("## Image sizes\n")
        lines.append("| kernel | vmlinux | stock | raw | gzip | lz4 | zstd |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for tag in tags:
            if (tag, "stock") not in size:
                continue
            s = size[tag, "stock"]
            cells = [f"{size[tag, i] / 1e6:.2f} MB" + (f" ({size[tag, i] / s:.2f}×)" if i not in ("stock", "vmlinux") else "")
                     for i in ("vmlinux", "stock", "raw", "gzip", "lz4", "zstd")]
            lines.append(f"| {tag} | " + " | ".join(cells) + " |")
            for codec in ("lz4", "zstd"):
                targets.append((f"{tag}: kpack {codec} image no larger than stock", size[tag, codec] <= s,
                                f"{size[tag, codec] / 1e6:.2f} MB vs {s / 1e6:.2f} MB"))
        lines.append("")
    times = defaultdict(list)
    for tag, codec, tool, _, s in rows(os.path.join(out, "pack.tsv")):
        times[tag, codec, tool].append(float(s))
    if times:
        lines.append("## Pack time\n")
        lines.append("Median seconds; the CLI compresses the whole vmlinux file, kpack its segments "
                     "(one frame per region).\n")
        lines.append("| kernel | codec | kpack s | CLI | CLI s | kpack / CLI |")
        lines.append("|---|---|---:|---|---:|---:|")
        cli = {"gzip": "gzip -9", "lz4": "lz4 -9", "zstd": "zstd -19 -T0"}
        for tag in tags:
            for codec in ("gzip", "lz4", "zstd"):
                k, c = times.get((tag, codec, "kpack")), times.get((tag, codec, "cli"))
                if not k or not c:
                    continue
                k, c = statistics.median(k), statistics.median(c)
                lines.append(f"| {tag} | {codec} | {k:.2f} | `{cli[codec]}` | {c:.2f} | {k / c:.2f} |")
                targets.append((f"{tag}: kpack --{codec} within 10 % of `{cli[codec]}`", k <= 1.1 * c, f"{k / c:.2f}×"))
        lines.append("")


def svg(out, tags, costs):
    """Horizontal bars of pre-kernel cost per image, one group per kernel, hand-written SVG."""
    bar, gap, left, width = 18, 4, 120, 520
    top = max((c for c in costs.values()), default=1) or 1
    y, parts = 40, []
    for tag in tags:
        present = [i for i in IMAGES if (tag, i) in costs]
        if not present:
            continue
        parts.append(f'<text x="8" y="{y}" font-weight="bold">{tag} cloud kernel (stock: {STOCK_CODEC.get(tag, "?")})</text>')
        y += 10
        for image in present:
            c = max(costs[tag, image], 0)
            w = max(1, width * c / top)
            colour = {"pvh": "#888", "stock": "#c0392b", "raw": "#27ae60"}.get(image, "#2980b9")
            label = "kpack " + image if image not in ("pvh", "stock") else image
            parts.append(f'<text x="{left - 6}" y="{y + bar - 5}" text-anchor="end">{label}</text>')
            parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar}" fill="{colour}"/>')
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 5}">{costs[tag, image] / 1e6:.1f} M</text>')
            y += bar + gap
        y += 24
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{y}" '
            'font-family="sans-serif" font-size="12">\n'
            '<rect width="100%" height="100%" fill="white"/>\n'
            '<text x="8" y="18" font-size="14">Pre-kernel cost: guest instructions before /init minus PVH '
            '(QEMU -icount)</text>\n')
    with open(os.path.join(out, "prekernel.svg"), "w") as f:
        f.write(head + "\n".join(parts) + "\n</svg>\n")


def main():
    out, tags = sys.argv[1], sys.argv[2:]
    lines, targets = ["# kpack benchmark results\n"], []
    machine = os.path.join(out, "machine.txt")
    if os.path.exists(machine):
        cpu, cores, qemu, kernel = (open(machine).read().splitlines() + [""] * 4)[:4]
        lines.append(f"Machine: {cpu}, {cores} cores, {qemu} (TCG), host kernel {kernel}.\n")
    costs = guest(out, tags, lines, targets)
    host(out, tags, lines, targets)
    sizes_and_pack(out, tags, lines, targets)
    if targets:
        lines.append("## Targets\n")
        lines.append("| target | met | measured |")
        lines.append("|---|---|---|")
        lines += [f"| {name} | {'yes' if ok else '**no**'} | {value} |" for name, ok, value in targets]
        lines.append("")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    if costs:
        svg(out, tags, costs)


if __name__ == "__main__":
    main()
