#!/usr/bin/env python3
"""report.py OUT — bench/run.sh's raw data in OUT into OUT/BENCHMARKS.md, OUT/headline.md (the
README's headline block) and OUT/prekernel.svg.

Every figure is computed here from the files the bench scripts wrote; the prose around them is
fixed text that states no figure, and every comparison word ("before", "fewer", "met") is chosen by
the numbers. A part whose data is missing gets a line saying it was not run, never an empty table.
Every figure is stated by the rules of bench/stats.py (bench/README.md, "Statistics rules"): its n,
a spread only from 3 values, a bimodal sample as bimodal, one ratio convention, targets that
compare like with like.
"""
import os
import re
import statistics
import sys
import textwrap
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import MIN_NOISY_N, RATIO_NOTE, Sample, figure, noisy_verdict, ratio_cell  # noqa: E402

IMAGES = ["pvh", "stock", "raw", "gzip", "lz4", "zstd", "xz"]
CODECS = ["raw", "gzip", "lz4", "zstd", "xz"]
# The stock payload's codec of each kernel, for directories from before run.sh recorded it in
# TAG/stock-codec.txt (`kpack info`), and of the generic kernel bench/xz.sh boots.
KNOWN_STOCK_CODEC = {"6.1": "lz4", "6.12": "zstd", "generic": "xz"}
SCRIPT = {"images": "bench/run.sh", "legacy": "bench/guest.sh", "efi": "bench/efi.sh", "smp": "bench/smp.sh",
          "host": "build/bench/kpack_host_bench", "pack": "bench/pack_time.sh", "kaslr": "bench/kaslr.sh",
          "xz": "bench/xz.sh", "setup": "bench/setup.sh", "microvm": "bench/microvm.sh"}
# The parts whose figures are wall times or multi-CPU ratios: other work on the host slows them.
NOISY_PARTS = {"legacy": "its wall times", "smp": "its cycle counts", "host": "its CPU times",
               "pack": "its pack times", "xz": "its pack times", "microvm": "its -smp 2 cycle counts"}


class Data:
    """The raw files of one output directory."""

    def __init__(self, out):
        self.out = out
        run = self.text("run.txt").splitlines() + [""] * 6
        self.stamp, self.cpu, self.cores, self.qemu, self.host_kernel, self.load = run[:6]

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def text(self, *parts):
        p = self.path(*parts)
        return open(p, errors="replace").read() if os.path.exists(p) else ""

    def rows(self, name):
        return [line.split("\t") for line in self.text(name).splitlines() if line.strip()]

    def samples(self, name):
        """TAG IMAGE RUN VALUE rows -> {(tag, image): Sample}."""
        values = defaultdict(list)
        for tag, image, _, value in self.rows(name):
            values[tag, image].append(float(value))
        return {k: Sample(v) for k, v in values.items()}

    def peak_load(self, part):
        """The highest 1-minute load average bench/run.sh sampled while PART ran, or None."""
        loads = [float(row[1]) for row in self.rows(os.path.join("load", part)) if len(row) > 1]
        return max(loads, default=None)

    def stock_codec(self, tag):
        """The codec of TAG's stock image, which kpack's image of the same codec is held against."""
        return self.text(tag, "stock-codec.txt").strip() or KNOWN_STOCK_CODEC.get(tag)

    def part_stamp(self, part):
        return self.text("stamps", part).strip()

    def log_values(self, tag, image, series, pattern):
        """The first match of PATTERN in each serial log of a series, as integers: the logs of the
        runs SERIES.tsv holds, not whatever an earlier run with more boots left beside them."""
        found = []
        for t, i, run, *_ in self.rows(f"{series}.tsv"):
            if (t, i) == (tag, image):
                m = re.search(pattern, self.text(tag, f"{image}.{series}{run}.log"))
                if m:
                    found.append(int(m.group(1)))
        return found


def tags_of(rows):
    return list(dict.fromkeys(r[0] for r in rows))


def mega(n, sign=False):
    return f"{n / 1e6:+.1f}" if sign else f"{n / 1e6:.1f}"


def kernel_name(data, tag):
    name = data.text(tag, "kernel.txt").strip()
    return f"{tag} ({name})" if name else tag


def prose(text):
    return textwrap.fill(text, 100, break_long_words=False, break_on_hyphens=False)


def numeric(cell):
    """A cell that starts with a figure: 1,234, -0.5, 1486.4 ±0.5 (n=3), 0.62 (1.2 %), bimodal: ..."""
    return re.match(r"[+-]?[\d,.]+(?: |$)|bimodal|undecided", str(cell)) is not None


def table(header, rows):
    """A Markdown table; columns whose cells all start with a figure are right-aligned."""
    align = ["---:" if i and rows and all(numeric(r[i]) or r[i] == "–" for r in rows) else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]


def ratio_head(name):
    """A ratio column's header with the convention in it: 'kpack / CLI (time, < 1: faster)'."""
    return f"{name} (time, {RATIO_NOTE})"


def delta_cell(a, b, scale=1e6):
    """A's median minus B's, in units of SCALE, signed; its spread the two half ranges added (both
    n >= 3 only); 'bimodal' when either sample is."""
    if a.bimodal or b.bimodal:
        return "bimodal"
    spread = a.spread + b.spread if a.spread is not None and b.spread is not None else None
    return figure((a.median - b.median) / scale, None if spread is None else spread / scale, 1, sign=True,
                  n=min(a.n, b.n))


def when(delta):
    return "before" if delta < 0 else "after"


def later(a, b, unit):
    """'2.8 (n=1) M instr later' / '4.0 ±0.8 (n=3) M instr earlier': when A reached /init against B."""
    delta = a.median - b.median
    spread = a.spread + b.spread if a.spread is not None and b.spread is not None else None
    text = figure(abs(delta) / 1e6, None if spread is None else spread / 1e6, 1, n=min(a.n, b.n))
    return f"{text} M {unit} {'earlier' if delta < 0 else 'later'}"


class Report:
    def __init__(self, data):
        self.data = data
        self.lines = []
        self.targets = []  # [target, kpack, reference, met, measured]
        self.headline = []  # rows of the headline table
        self.tags = tags_of(data.rows("sizes.tsv"))
        self.legacy = self.efi = self.sizes = self.xz_sizes = self.xz_costs = None
        self.smp = {}

    def add(self, *lines):
        self.lines.extend(lines)

    def say(self, text):
        self.lines.extend([prose(text), ""])

    def target(self, name, kpack, reference, met, measured, part=None):
        """A target: what kpack's figure (KERNEL kpack CODEC ...) is held against (KERNEL stock CODEC,
        KERNEL PVH, ...: the same kernel, and a stock image or codec tool only of kpack's own codec).
        MET is a bool or a verdict cell (stats.noisy_verdict); PART names a noisy part, whose
        overload, if any, the measured cell states."""
        if isinstance(met, bool):
            met = "yes" if met else "**no**"
        load = self.overload(part) if part else None
        if load:
            measured += f" (load {load:g} > {self.data.cores} cores)"
        self.targets.append([name, kpack, reference, met, measured])

    def overload(self, part):
        """The peak 1-minute load average during PART when it exceeded the core count, else None."""
        peak = self.data.peak_load(part)
        cores = int(self.data.cores) if self.data.cores.isdigit() else 0
        return peak if peak is not None and cores and peak > cores else None

    def load_note(self, part):
        """What other work on the machine did to a noisy part's figures."""
        peak = self.data.peak_load(part)
        what = NOISY_PARTS[part]
        if peak is None:
            self.say(f"Load during this part: not recorded in this directory, so whether other work slowed "
                     f"{what} is unknown.")
        elif self.overload(part):
            self.say(f"**Load:** the 1-minute load average reached {peak:g} during this part, above this machine's "
                     f"{self.data.cores} cores: other work competed with it, and {what} are slower and noisier "
                     "than on a quiet machine.")
        else:
            self.say(f"Load: the 1-minute load average stayed at or below {peak:g} during this part "
                     f"({self.data.cores} cores).")

    def section(self, title, part, what):
        """A heading, what the table measures, the script and the run that made it. False when that
        part never ran into this directory."""
        self.add(f"## {title}", "")
        stamp = self.data.part_stamp(part)
        made = f"Made by `{SCRIPT[part]}` (part `{part}`)"
        if not stamp:
            self.say(f"{what} Not measured: no run of part `{part}` has finished into this directory "
                     f"(`bench/run.sh --only {part}`).")
            return False
        if stamp != self.data.stamp:
            made += f", in an earlier run: {stamp}"
        self.say(f"{what} {made}.")
        return True


def legacy(r):
    d = r.data
    if not r.section("Legacy boot, one CPU: instructions to /init", "legacy",
                     "SeaBIOS `-kernel` (the 16-bit entry), one CPU, `-icount shift=0,sleep=off`: the TSC at `/init` "
                     "in M guest instructions (median, then half the range from 3 boots, then n), with QEMU's "
                     "default CPU model (qemu64: SSE2, no AVX) and with `-cpu max` (AVX2); pre-kernel cost = that "
                     "minus PVH's; stub phases from `kpack.debug` (qemu64, first boot)."):
        return {}
    base = d.samples("icount.tsv")
    cpu_max = d.samples("icount-max.tsv")
    r.say("With qemu64 an `-icount` boot repeats exactly, so one boot per image is the figure; `-cpu max` "
          "has RDRAND, which makes every KASLR draw, kpack's and stock's, differ from boot to boot.")
    r.legacy = (base, cpu_max)
    costs = {}
    for tag in tags_of(d.rows("icount.tsv")):
        r.add(f"### {kernel_name(d, tag)}, stock codec {d.stock_codec(tag) or '?'}", "")
        rows = []
        for image in IMAGES:
            if (tag, image) not in base:
                continue
            costs[tag, image] = base[tag, image].median - base[tag, "pvh"].median
            cells = [image] + cost_cells(base, tag, image)
            cells += cost_cells(cpu_max, tag, image) if (tag, image) in cpu_max else ["–"] * 3
            rows.append(cells + [phases(d, tag, image)])
        r.add(*table(["image", "qemu64: /init (M)", "pre-kernel cost (M)", ratio_head("cost / stock's"),
                      "`-cpu max`: /init (M)", "pre-kernel cost (M)", ratio_head("cost / stock's"),
                      "stub phases, qemu64 (M instr)"], rows))
        legacy_targets(r, tag, base, cpu_max, costs)
    wall(r)
    return costs


def cost_cells(series, tag, image):
    """/init, pre-kernel cost (minus PVH's) and that cost over stock's, of one image in one series."""
    this, pvh, stock = series[tag, image], series[tag, "pvh"], series.get((tag, "stock"))
    if image == "pvh":  # the floor the costs are measured from
        return [this.cell(1e6), "–", "–"]
    cells = [this.cell(1e6), delta_cell(this, pvh)]
    if stock is None or image == "stock" or stock.median == pvh.median:
        return cells + ["–"]
    if this.bimodal or stock.bimodal or pvh.bimodal:
        return cells + ["bimodal"]
    value = (this.median - pvh.median) / (stock.median - pvh.median)
    spreads = [s.spread for s in (this, pvh, stock)]
    spread = None
    if None not in spreads:  # relative half ranges of the two costs, added
        spread = abs(value) * ((spreads[0] + spreads[1]) / abs(this.median - pvh.median or 1) +
                               (spreads[2] + spreads[1]) / abs(stock.median - pvh.median))
    return cells + [figure(value, spread, 2, n=min(this.n, pvh.n, stock.n))]


def phases(d, tag, image, series="icount"):
    """The stub's phase lines of its first -icount log, condensed: M instructions per phase."""
    if image in ("pvh", "stock"):
        return ""
    text = d.text(tag, f"{image}.{series}0.log")
    parts = [f"{m.group(1)} {mega(int(m.group(2)))}" for m in re.finditer(r"kpack: (\w[\w ]*) bytes=\d+ cycles=(\d+)", text)
             if int(m.group(2)) > 100_000]
    total = re.search(r"total cycles=(\d+)", text)
    return f"stub {mega(int(total.group(1)))}" + (": " + ", ".join(parts) if parts else "") if total else ""


def legacy_targets(r, tag, base, cpu_max, costs):
    if (tag, "raw") in costs:
        r.target(f"{tag}: kpack raw, KASLR on, within 5 M instructions of PVH (qemu64)", f"{tag} kpack raw",
                 f"{tag} PVH", costs[tag, "raw"] <= 5e6, f"{mega(costs[tag, 'raw'], True)} M")
    own = r.data.stock_codec(tag)
    # Issue 45: on a zstd kernel, kpack's zstd image is to cost at most 0.85 of what stock's does.
    if own == "zstd" and (tag, "zstd") in costs and (tag, "stock") in costs and costs[tag, "stock"] > 0:
        share = costs[tag, "zstd"] / costs[tag, "stock"]
        r.target(f"{tag}: kpack zstd's pre-kernel cost at most 0.85 of the stock image's (qemu64)", f"{tag} kpack zstd",
                 f"{tag} stock zstd", share <= 0.85, f"{share:.2f}")
    for name, series in (("qemu64", base), ("`-cpu max`", cpu_max)):
        if (tag, own) in series and (tag, "stock") in series:
            mine, stock = series[tag, own], series[tag, "stock"]
            met = "undecided: bimodal" if mine.bimodal or stock.bimodal else mine.median <= stock.median
            r.target(f"{tag}: kpack {own} reaches /init no later than the stock image ({name})", f"{tag} kpack {own}",
                     f"{tag} stock {own}", met, f"{delta_cell(mine, stock)} M instructions")


def wall(r):
    d = r.data
    values = defaultdict(list)
    for tag, image, _, s in d.rows("wall.tsv"):
        values[tag, image].append(float(s))
    if not values:
        r.add("No wall-time rounds in this run.", "")
        return
    samples = {k: Sample(v) for k, v in values.items()}
    r.add("### Wall time to /init", "")
    r.say("The same boots without `-icount`: seconds from QEMU's start to the `/init` marker, median, half the "
          "range and n of the interleaved rounds (every round boots every image once, in a rotated order). Wall "
          f"time on a shared TCG host is noisy; the instruction counts above are not: fewer than {MIN_NOISY_N} "
          "rounds rank nothing, and where the order of two images here differs from the instruction counts', "
          "the difference is within the noise unless their ranges are apart.")
    r.load_note("legacy")
    rows = []
    for tag in tags_of(d.rows("wall.tsv")):
        floor = samples[tag, "pvh"]
        for image in IMAGES:
            if (tag, image) in samples:
                rows.append([tag, image, samples[tag, image].cell(1, 2),
                             ratio_cell(samples[tag, image], floor) if image != "pvh" else "–"])
    r.add(*table(["kernel", "image", "wall (s)", ratio_head("wall / PVH's")], rows))


def efi(r):
    d = r.data
    if not r.section("OVMF `-kernel`, one CPU: instructions to /init", "efi",
                     "OVMF's `-kernel` path (LoadImage/StartImage of the PE view, initrd through LoadFile2), one "
                     "CPU, qemu64, `-icount shift=0,sleep=off`: TSC at `/init` in M guest instructions (median and "
                     "n), firmware included; the stub's start TSC from `kpack.debug` (median of the same boots)."):
        return
    med = d.samples("efi.tsv")
    r.efi = med
    rows = []
    size = {(t, i): int(b) for t, i, b, *_ in d.rows("sizes.tsv")}
    for tag in tags_of(d.rows("efi.tsv")):
        stock, own = med.get((tag, "stock")), r.data.stock_codec(tag)
        for image in IMAGES + ["raw-compact"]:
            if (tag, image) not in med:
                continue
            starts = d.log_values(tag, image, "efi", r"started at tsc=(\d+)")
            versus = stock and image != "stock"
            rows.append([tag, image, med[tag, image].cell(1e6), delta_cell(med[tag, image], stock) if versus else "–",
                         Sample(starts).cell(1e6) if starts else "–", f"{size.get((tag, image), 0):,}"])
            if versus and image == own:
                delta = med[tag, image].median - stock.median
                r.target(f"{tag}: OVMF -kernel, kpack {image} reaches /init no later than stock", f"{tag} kpack {image}",
                         f"{tag} stock {own}", delta <= 0, f"{mega(delta, True)} M instructions")
                if image == "lz4":
                    r.target(f"{tag}: OVMF -kernel, kpack lz4 at most 10 M instructions after stock", f"{tag} kpack lz4",
                             f"{tag} stock lz4", delta <= 10e6, f"{mega(delta, True)} M instructions")
            if versus and image == "raw-compact":
                # The layout meant for UEFI (--layout compact): the firmware reads every byte of the file.
                delta = med[tag, image].median - stock.median
                r.target(f"{tag}: OVMF -kernel, kpack raw (--layout compact) reaches /init no later than stock",
                         f"{tag} kpack raw-compact", f"{tag} stock {own}", delta <= 0,
                         f"{mega(delta, True)} M instructions")
    r.add(*table(["kernel", "image", "/init (M instr)", "vs stock (M)", "stub started at (M)", "file bytes"], rows))


def smp_samples(data, tag, image):
    """The decode cycles with every CPU and with kpack.cpus=1 of one image, the helper's frames, and
    the ratio of the whole stub's cycles (waking the helpers included) as a cell."""
    mine = [x for x in data if x[0] == tag and x[1] == image]
    cycles = {m: [int(x[4]) for x in mine if x[2] == m] for m in ("all", "one")}
    if not cycles["all"] or not cycles["one"]:
        return None
    helpers = Sample([int(x[5]) for x in mine if x[2] == "all"])
    stub = {m: [int(x[6]) for x in mine if x[2] == m and len(x) > 6 and x[6]] for m in ("all", "one")}
    whole = ratio_cell(Sample(stub["all"]), Sample(stub["one"])) if stub["all"] and stub["one"] else "–"
    return Sample(cycles["all"]), Sample(cycles["one"]), helpers, whole


def smp_ratio(every, one):
    """all / one as (cell, value or None, fast-cluster ratio cell): a bimodal side gives no ratio of
    medians, only that of the fast clusters (the boots no other work slowed)."""
    cell = ratio_cell(every, one)
    value = None if every.bimodal or one.bimodal else every.median / one.median
    fast = f"{every.fastest / one.fastest:.2f}" if every.bimodal or one.bimodal else "–"
    return cell, value, fast


def smp_results(data):
    """Each (tag, image) of an -smp 2 file that has boots both ways: its samples and smp_ratio."""
    for tag in tags_of(data):
        for image in dict.fromkeys(x[1] for x in data if x[0] == tag):
            found = smp_samples(data, tag, image)
            if found:
                every, one, helpers, whole = found
                yield (tag, image, every, one, helpers) + smp_ratio(every, one) + (whole,)


def retried_note(r, series):
    """The boots of these bench/smp.sh series that did not reach /init and were booted again
    (OUT/retried.txt: SERIES TAG IMAGE WORDS REASON, a line per failed boot), each with its reason;
    the table has only the figures of the boot that reached /init."""
    retried = [x for x in r.data.rows("retried.txt") if x[0] in series]
    if retried:
        boots = "1 boot" if len(retried) == 1 else f"{len(retried)} boots"
        r.say(f"{boots} of these did not reach `/init` and were booted again (bench/smp.sh, "
              "`kernel_fault`; the table holds the boot that reached it): " +
              "; ".join(f"{x[1]} {x[2]} {'' if x[3] == '-' else x[3] + ' '}({x[0]}): "
                        f"{x[4] if len(x) > 4 else 'a known fault of multi-threaded TCG'}" for x in retried) + ".")


def smp(r):
    d = r.data
    if not r.section("Every CPU against one: the decode phase on -smp 2", "smp",
                     "A 2-CPU guest under multi-threaded TCG (no `-icount`; guest RAM preallocated, so the host's page "
                     "faults on first writes, which made one boot twice as slow as another, are not timed), booted "
                     "with every CPU decoding and with `kpack.cpus=1`, interleaved: the stub's decode phase in TSC "
                     "cycles (`kpack.debug`; median, half the range, n) and how many frames the helper CPU decoded. "
                     "Both runs have the same machine, so the ratio is the stub's, not QEMU's. The last column is "
                     "the ratio of the whole stub's cycles (`total cycles`, entry to the kernel's relocation): the "
                     "helpers are woken before the decode, and what that costs the boot CPU lies outside it."):
        return
    r.load_note("smp")
    for firmware, name in (("SeaBIOS `-kernel`", "smp.tsv"), ("OVMF `-kernel`", "smp-ovmf.tsv")):
        rows = []
        for tag, image, every, one, helpers, cell, value, fast, whole in smp_results(d.rows(name)):
            rows.append([tag, image, every.cell(1e6), one.cell(1e6), cell, fast, f"{helpers.median:g}", whole])
            r.smp[firmware, tag, image] = (every, one, cell, fast)
            if firmware.startswith("OVMF"):
                r.target(f"{tag}: OVMF -smp 2, all CPUs / kpack.cpus=1 at most 0.6 ({image}, median)",
                         f"{tag} kpack {image}, all CPUs", f"{tag} kpack {image}, kpack.cpus=1",
                         noisy_verdict(value is not None and value <= 0.6, [every, one]), cell, "smp")
            elif image == "zstd":
                r.target(f"{tag}: -smp 2, all CPUs / kpack.cpus=1 at most 0.55 (zstd, median)",
                         f"{tag} kpack {image}, all CPUs", f"{tag} kpack {image}, kpack.cpus=1",
                         noisy_verdict(value is not None and value <= 0.55, [every, one]), cell, "smp")
        r.add(f"### {firmware}", "")
        r.add(*table(["kernel", "image", "all CPUs (M cycles)", "kpack.cpus=1 (M cycles)",
                      ratio_head("all / one"), "fast clusters' ratio", "frames by the helper (median)",
                      "whole stub, all / one"], rows))
    retried_note(r, ("smp", "smp-ovmf"))
    ceilings = [f"{tag} {codec} {float(many) / float(one):.2f}" for tag in r.tags
                for codec, one, many in host_threads(d.text(tag, "host.txt") or "")]
    if ceilings:
        r.say("The same frames decoded natively on this host's two cores (part host, kpack_host_bench --threads 2, "
              "two threads against one): " + ", ".join(ceilings) + ". A guest ratio near these is the machine's, "
              "not the stub's; `kpack.debug`'s decode timeline line says when each CPU left the queue.")
    r.say("Host threads that share the 2 cores with the guest's slow a boot down and never speed one up: where "
          "a column's boots fall into a fast and a slow group (bimodal, bench/README.md), a median would land "
          "between the two, so that column gives each group's median and n, the ratio of medians is not stated, "
          "and the fast groups' ratio is given instead; a target on it is not decided.")


def host_runs(text):
    """n of a kpack_host_bench output, from its first line ('# VMLINUX, N runs, ...')."""
    m = re.search(r", (\d+) runs,", text)
    return int(m.group(1)) if m else 0


def host_threads(text):
    """(codec, 1-thread ms, 2-thread ms) of kpack_host_bench --threads 2's wall-clock lines."""
    return re.findall(r"^(\S+) +engine wall ms: 1 thread ([\d.]+), 2 threads ([\d.]+)", text, re.M)


def time_ratio(mine, reference):
    """MINE / REFERENCE, two medians in ms as host_bench prints them (no spread: 3 decimals)."""
    return f"{float(mine) / float(reference):.3f}" if float(reference) else "–"


def host(r):
    d = r.data
    if not r.section("Host: engine, library and stock-shaped decode", "host",
                     "`kpack_host_bench VMLINUX`: each codec's image packed in memory as `kpack` packs it, then "
                     "decoded on one thread with warm buffers (median thread-CPU ms of n interleaved runs; "
                     "`kpack_host_bench` keeps no spread) by the stub's engine, by the codec library's own "
                     "streaming decoder, and in the stock decompressor's shape (whole ELF into a buffer, then each "
                     "segment moved). engine / library and engine / stock are time ratios (below 1: the engine is "
                     "faster); moved: bytes the engine copied besides decoder output."):
        return
    r.load_note("host")
    verify, placement, threads = [], [], []
    for tag in r.tags:
        text = d.text(tag, "host.txt")
        if not text:
            continue
        n = host_runs(text)
        # Three tables, a blank line between them: codecs, verification, where the digest runs.
        first, second, third = (text.split("\n\n") + ["", ""])[:3]
        rows = [line.split() for line in first.splitlines()
                if line.strip() and not line.startswith(("#", "codec")) and "wall ms" not in line]
        threads += [[tag, n] + list(m) for m in host_threads(first)]
        r.add(f"### {tag}", "")
        r.add(f"n = {n} runs.", "")
        r.add(*table(["codec", "image bytes", "segment bytes", "engine ms", "library ms", "stock ms", "memcpy ms",
                      ratio_head("engine / library"), ratio_head("engine / stock"), "moved", "output"],
                     [c[:7] + [time_ratio(c[3], c[4]), time_ratio(c[3], c[5])] + c[9:] for c in rows]))
        for c in rows:
            # A raw image loaded at 1 MiB (as here) is moved up to the kernel's floor once: at most
            # its segment bytes. Compressed images are decoded in place: nothing moved.
            if c[0] == "raw":
                r.target(f"{tag}: the engine moves a raw kernel at most once ({c[0]})", f"{tag} kpack {c[0]}",
                         f"{tag} segment bytes", int(c[9]) <= int(c[2]), f"moved {c[9]} of {c[2]} segment bytes")
            else:
                r.target(f"{tag}: the engine copies nothing besides decoder output ({c[0]})", f"{tag} kpack {c[0]}",
                         f"{tag} decoder output only", c[9] == "0", f"moved {c[9]}")
        verify += [[tag, n] + line.split() for line in second.splitlines()
                   if line.strip() and not line.startswith(("#", "codec"))]
        placement += [[tag, n] + line.split() for line in third.splitlines()
                      if line.strip() and not line.startswith(("#", "codec"))]
    r.add("### What verifying costs", "")
    r.say("The second table of the same runs, for the codecs whose frames carry the frame table's XXH3-64: the "
          "digest the engine computes (of each frame's compressed bytes), the digest of the decoded bytes, a "
          "64-bit word sum of the compressed bytes (the floor for any cheaper check), and zeroing each segment's "
          "tail past its file bytes; then the engine's time over the library's, and over the library's plus "
          "the tails'.")
    r.add(*table(["kernel", "n", "codec", "engine ms", "library ms", "XXH3 compressed ms", "XXH3 decoded ms", "sum ms",
                  "tails ms", ratio_head("engine / library"), ratio_head("engine / (library + tails)")], verify))
    for c in verify:
        r.target(f"{c[0]}: host engine at most 1.05x the library decode ({c[2]})", f"{c[0]} kpack {c[2]} engine",
                 f"{c[0]} {c[2]} library", float(c[9]) <= 1.05 if c[1] >= MIN_NOISY_N else
                 f"undecided: n={c[1]} < {MIN_NOISY_N}", f"{c[9]}x", "host")
    if threads:  # runs before --threads 2 have none
        r.add("### Two host threads against one", "")
        r.say("The same runs' engine on two threads (the caller and one helper taking frames from the queue, as the "
              "stub's CPUs do) against one: wall-clock medians, interleaved. What two CPUs gain on this machine "
              "without an emulator is the bound for the guest's two-CPU decode ratio (the SMP section).")
        r.add(*table(["kernel", "n", "codec", "1 thread ms", "2 threads ms", ratio_head("2 threads / 1")],
                     [c[:5] + [time_ratio(c[4], c[3])] for c in threads]))
    r.add("### Where the digest runs", "")
    r.say("The third table of the same runs: each frame decoded alone by the library, then with its XXH3 taken "
          "right before the decode and right after it (the engine's order: the decoder has just pulled the frame "
          "into cache); the "
          "last two columns are what the digest adds in each place.")
    r.add(*table(["kernel", "n", "codec", "alone ms", "digest before ms", "digest after ms", "+before ms", "+after ms"],
                 placement))


def sizes(r):
    d = r.data
    if not r.section("Image and stub sizes", "images",
                     "Bytes of each image as the packer's defaults write it from the stock image (`kpack --CODEC "
                     "BZIMAGE`: its header's 5-level flag and its relocation table carried), beside the stock image "
                     "and the vmlinux; raw also as allocated on this file system (`du -B1`). Sizes do not vary from "
                     "run to run (n = 1). In parentheses: kpack / stock bytes (below 1: smaller); a size target holds "
                     "kpack's image of the stock image's own codec against it."):
        return
    size = {(row[0], row[1]): (int(row[2]), int(row[-1])) for row in d.rows("sizes.tsv")}
    rows = []
    for tag in tags_of(d.rows("sizes.tsv")):
        if any((tag, i) not in size for i in IMAGES[1:] + ["vmlinux"]):
            r.say(f"The sizes of {tag} are incomplete in this directory (`bench/run.sh --only pack` measures them).")
            continue
        stock, own = size[tag, "stock"][0], r.data.stock_codec(tag)
        cells = [tag, f"{size[tag, 'vmlinux'][0]:,}", f"{stock:,} ({own or '?'})",
                 f"{size[tag, 'raw'][0]:,} / {size[tag, 'raw'][1]:,}"]
        cells += [f"{size[tag, c][0]:,} ({size[tag, c][0] / stock:.3f})" for c in ("gzip", "lz4", "zstd", "xz")]
        rows.append(cells)
        if own in CODECS:
            r.target(f"{tag}: kpack {own} image no larger than the stock {own} image", f"{tag} kpack {own}",
                     f"{tag} stock {own}", size[tag, own][0] <= stock, f"{size[tag, own][0]:,} vs {stock:,} bytes")
    r.add(*table(["kernel", "vmlinux", "stock", "raw: apparent / allocated", "gzip (kpack / stock bytes)", "lz4",
                  "zstd", "xz"], rows))
    r.say("The stub each codec's image carries and the 16-bit setup every image carries "
          "(`build/stub/*.bin` of this build):")
    stubs = d.rows("stubs.tsv")
    r.add(*table([s for s, _ in stubs], [[f"{int(b):,}" for _, b in stubs]]))
    r.sizes = size


def pack(r):
    d = r.data
    if not r.section("Pack time", "pack",
                     "Wall seconds (median, half the range and n of alternating runs) of `kpack --CODEC` on the "
                     "vmlinux against the codec's own CLI at the same level on the same file (the CLI compresses "
                     "the whole file; kpack its frames, on every core)."):
        return
    r.load_note("pack")
    times = defaultdict(list)
    for tag, codec, tool, _, s in d.rows("pack.tsv"):
        times[tag, codec, tool].append(float(s))
    cli = {"gzip": "gzip -9", "lz4": "lz4 -12 --favor-decSpeed", "zstd": "zstd -19 -T0"}
    rows = []
    for tag in tags_of(d.rows("pack.tsv")):
        for codec in cli:
            if not times[tag, codec, "kpack"] or not times[tag, codec, "cli"]:
                continue
            k, c = Sample(times[tag, codec, "kpack"]), Sample(times[tag, codec, "cli"])
            cell = ratio_cell(k, c)
            rows.append([tag, codec, k.cell(1, 2), f"`{cli[codec]}`", c.cell(1, 2), cell])
            r.target(f"{tag}: kpack --{codec} within 10 % of `{cli[codec]}`", f"{tag} kpack {codec}",
                     f"{tag} `{cli[codec]}`", noisy_verdict(k.median <= 1.1 * c.median, [k, c]), cell, "pack")
    r.add(*table(["kernel", "codec", "kpack s", "CLI", "CLI s", ratio_head("kpack / CLI")], rows))


def raw_over_pvh_by_phase(d, tag):
    """/init of raw minus PVH's, both nokaslr, per run of kaslr-phase.tsv (one inert word's length per
    run, the same for both): (median, cell) of those differences, or None without the series. Not a
    Sample: the values are the phases' spread, exact on repeat, not load, so no cluster is dropped."""
    at = {(image, run): int(tsc) for t, image, run, tsc in d.rows("kaslr-phase.tsv") if t == tag}
    diffs = sorted(at["raw", run] - at["pvh", run] for image, run in at if image == "raw" and ("pvh", run) in at)
    if not diffs:
        return None
    median = statistics.median(diffs)
    return median, (f"{mega(median, True)} M, median of {len(diffs)} timer phases "
                    f"({mega(diffs[0], True)} to {mega(diffs[-1], True)})")


def kaslr(r):
    d = r.data
    if not r.section("KASLR", "kaslr",
                     "Each kpack image on one CPU, qemu64, `-icount shift=0,sleep=off`, booted with KASLR (the "
                     "default: the stub applies the relocation table) and with `nokaslr`: the stub's own total "
                     "(`kpack.debug`, exact) and the TSC at `/init` (the kernel also randomizes its own memory "
                     "regions, so `/init` moves by a little between boots), median and n, M instructions."):
        return
    off, on = d.samples("kaslr-off.tsv"), d.samples("kaslr-on.tsv")
    rows = []
    for tag in tags_of(d.rows("kaslr-on.tsv")):
        # The floor: the vmlinux's own PVH boot with the same command line (nokaslr), at several
        # timer phases when bench/kaslr.sh measured them (one pair lands anywhere in 0.5-2.6 M).
        phased = raw_over_pvh_by_phase(d, tag)
        if phased:
            r.target(f"{tag}: kpack raw bzImage (in place) with nokaslr within 2 M instructions of the PVH floor "
                     "(SeaBIOS -kernel)", f"{tag} kpack raw, nokaslr", f"{tag} PVH", phased[0] <= 2e6, phased[1])
        elif (tag, "raw") in off and (tag, "pvh") in off:
            over = off[tag, "raw"].median - off[tag, "pvh"].median
            r.target(f"{tag}: kpack raw bzImage (in place) with nokaslr within 2 M instructions of the PVH floor "
                     "(SeaBIOS -kernel)", f"{tag} kpack raw, nokaslr", f"{tag} PVH", over <= 2e6,
                     f"{mega(over, True)} M")
        for image in ("raw", "gzip", "lz4", "zstd"):
            stub = {s: Sample(d.log_values(tag, image, f"kaslr-{s}", r"total cycles=(\d+)") or [0])
                    for s in ("off", "on")}
            adds = stub["on"].median - stub["off"].median
            share = f"{100 * adds / stub['off'].median:+.1f} %" if stub["off"].median > 1e6 else "n/a"
            rows.append([tag, image, stub["off"].cell(1e6, 2), stub["on"].cell(1e6, 2),
                         delta_cell(stub["on"], stub["off"]), share, off[tag, image].cell(1e6), on[tag, image].cell(1e6)])
            if stub["off"].median > 1e6:
                r.target(f"{tag}: KASLR adds at most 3 % to the {image} stub", f"{tag} kpack {image}, KASLR",
                         f"{tag} kpack {image}, nokaslr", adds <= 0.03 * stub["off"].median, share)
    r.add(*table(["kernel", "image", "stub, nokaslr", "stub, KASLR", "KASLR adds", "of the stub's cost",
                  "/init, nokaslr", "/init, KASLR"], rows))


def xz(r):
    d = r.data
    if not r.section("xz: Debian's generic kernel", "xz",
                     "Debian's 6.1 generic kernel, whose stock image is xz (LZMA2 behind x86 BCJ): image sizes "
                     "(n = 1: they do not vary); `-icount` boots (SeaBIOS, one CPU, qemu64) of PVH, the stock image "
                     "and kpack xz, median and n; `kpack --xz` against `xz --check=crc32 --x86 "
                     "--lzma2=preset=9,lc=4,nice=273` on the same vmlinux; `kpack_host_bench --codecs xz`."):
        return
    r.add(f"Kernel: {kernel_name(d, 'generic')}.", "")
    size = {i: int(b) for _, i, b in d.rows("xz-sizes.tsv")}
    r.add(*table(["stock (xz)", "kpack xz", "kpack zstd"], [[f"{size[i]:,}" for i in ("stock", "xz", "zstd")]]))
    r.xz_sizes = size
    r.target("generic: kpack xz image no larger than the stock xz image", "generic kpack xz", "generic stock xz",
             size["xz"] <= size["stock"], f"{size['xz']:,} vs {size['stock']:,} bytes")
    med = d.samples("xz.tsv")
    floor = med["generic", "pvh"]
    rows = [[image, med["generic", image].cell(1e6), delta_cell(med["generic", image], floor) if image != "pvh" else "–",
             phases(d, "generic", image, "xz")] for image in ("pvh", "stock", "xz")]
    r.add(*table(["image", "/init (M instr)", "pre-kernel cost (M)", "stub phases (M instr)"], rows))
    r.xz_costs = (med["generic", "xz"].median - floor.median, med["generic", "stock"].median - floor.median)
    times = defaultdict(list)
    for _, tool, _, s in d.rows("xz-pack.tsv"):
        times[tool].append(float(s))
    if times["kpack"] and times["xz"]:
        k, c = Sample(times["kpack"]), Sample(times["xz"])
        r.say(f"Pack time, alternating runs (median, half the range, n): `kpack --xz` {k.cell(1, 1)} s, `xz` "
              f"{c.cell(1, 1)} s; kpack / xz time {ratio_cell(k, c)} (below 1: kpack faster).")
        r.load_note("xz")
    text = d.text("generic", "host-xz.txt")
    host = [line.split() for line in text.partition("\n\n")[0].splitlines() if line.startswith("xz")]
    if host:
        h = host[0]
        r.say(f"Host decode (`kpack_host_bench`, relocation table left out, median of n={host_runs(text)}): engine "
              f"{h[3]} ms, liblzma {h[4]} ms (engine / liblzma time {time_ratio(h[3], h[4])}, below 1: engine faster).")


def setup(r):
    d = r.data
    if not r.section("The 16-bit setup", "setup",
                     "The raw image through SeaBIOS `-kernel` (the 16-bit entry; `-display none`: std VGA; no disk), "
                     "one CPU, qemu64, `-icount shift=0,sleep=off`: the TSC at which the stub started "
                     "(`kpack.debug`), i.e. the instructions SeaBIOS, its `-kernel` loader and kpack's 16-bit setup "
                     "ran before it, beside `/init` of the same image and of a PVH boot (no firmware setup, no "
                     "stub: the floor). Median and n, M instructions."):
        return
    med = d.samples("setup.tsv")
    rows = []
    for tag in tags_of(d.rows("setup.tsv")):
        starts = d.log_values(tag, "raw", "setup", r"started at tsc=(\d+)")
        rows.append([tag, Sample(starts).cell(1e6, 2) if starts else "–", med[tag, "raw"].cell(1e6),
                     med[tag, "pvh"].cell(1e6), delta_cell(med[tag, "raw"], med[tag, "pvh"])])
    r.add(*table(["kernel", "stub started at", "raw: /init", "PVH: /init", "raw − PVH"], rows))


ELF_IMAGES = ["elf-raw", "elf-lz4", "elf-zstd"]
MACHINES = {"pc": "`-M pc` (SeaBIOS; PVH option ROM)", "microvm": "`-M microvm,acpi=on`"}


def microvm(r):
    d = r.data
    if not r.section("Direct-boot ELF (`kpack --elf`): `-M pc` and `-M microvm`", "microvm",
                     "kpack's ELF output (`kpack --elf --CODEC STOCK_BZIMAGE`: the PVH entry, the way Firecracker, "
                     "Cloud Hypervisor and QEMU's `microvm` boot a kernel) booted by QEMU `-kernel` on one CPU, "
                     "qemu64, `-icount shift=0,sleep=off`: the TSC at `/init` in M guest instructions, against the "
                     "vmlinux's own PVH boot (the floor: no decompressor, no KASLR) and the stock bzImage "
                     "`-kernel`. On microvm the command line also has `tsc_early_khz=2300000` (that kernel cannot "
                     "calibrate the TSC under TCG otherwise) and QEMU is stopped at the `/init` marker (microvm's "
                     "power-off does not end it)."):
        return
    rows = d.rows("microvm.tsv")
    values = defaultdict(list)
    for tag, machine, image, setting, _, tsc in rows:
        values[tag, machine, image, setting].append(int(tsc))
    med = {k: Sample(v) for k, v in values.items()}
    runs = {s: sorted({len(v) for k, v in values.items() if k[3] == s}) for s in ("pvh", "nokaslr", "kaslr")}
    spread = max((max(v) - min(v) for k, v in values.items() if k[3] == "kaslr"), default=0)
    r.say("-icount repeats a boot exactly, so the PVH and `nokaslr` figures are one boot each "
          f"(n = {'/'.join(map(str, sorted(set(runs['pvh'] + runs['nokaslr']))))}). KASLR's draw mixes in the "
          "TSC, so a KASLR figure (stock's and kpack's) is the median of "
          f"n = {'/'.join(map(str, runs['kaslr']))} boots; "
          + (f"the widest range among them was {spread / 1e6:.2f} M instructions. " if spread else
             "here every KASLR image's boots gave the same count (qemu64 has no RDRAND and under -icount the "
             "TSC the draw reads is itself an instruction count, so each boot drew the same slot). ")
          + "Ratio columns: time kpack / time reference (below 1 = kpack faster); pre-kernel cost = `/init` "
          "minus PVH's.")
    for tag in tags_of(rows):
        r.add(f"### {kernel_name(d, tag)}: instructions to /init", "")
        table_rows = []
        machines = [m for m in MACHINES if (tag, m, "pvh", "pvh") in med]
        specs = [("pvh", "pvh"), ("stock", "kaslr")] + [(i, s) for i in ELF_IMAGES for s in ("nokaslr", "kaslr")]
        for image, setting in specs:
            label = {"pvh": "vmlinux PVH (floor)", "stock": "stock bzImage, KASLR"}.get(
                image, f"kpack {image[4:]} ELF, {'KASLR' if setting == 'kaslr' else '`nokaslr`'}")
            cells = [label]
            for m in machines:
                key = (tag, m, image, setting)
                if key not in med:
                    cells += ["–"] * 3
                    continue
                floor, stock = med[tag, m, "pvh", "pvh"], med.get((tag, m, "stock", "kaslr"))
                cells += [med[key].cell(1e6), delta_cell(med[key], floor) if image != "pvh" else "–",
                          ratio_cell(med[key], stock, 3) if stock and image != "stock" else "–"]
            table_rows.append(cells)
        header = ["image"]
        for m in machines:
            header += [f"{m}: /init (M)", f"{m}: pre-kernel cost (M)", ratio_head(f"{m}: /init / stock's")]
        r.add(*table(header, table_rows))
        r.say("KASLR's own cost: `/init` with KASLR minus `/init` with `nokaslr`, same image and machine "
              "(for raw this is the relocation pass and the physical move; the median of the KASLR boots), M "
              "instructions.")
        kr = []
        for image in ELF_IMAGES:
            cells = [f"kpack {image[4:]} ELF"]
            for m in machines:
                on, off = med.get((tag, m, image, "kaslr")), med.get((tag, m, image, "nokaslr"))
                cells.append(delta_cell(on, off) if on is not None and off is not None else "–")
            kr.append(cells)
        r.add(*table(["image"] + [f"{m}: KASLR adds (M)" for m in machines], kr))
        for m in machines:
            key = (tag, m, "elf-raw", "nokaslr")
            if key in med:
                extra = med[key].median - med[tag, m, "pvh", "pvh"].median
                r.target(f"{tag}: {m}, kpack raw ELF with nokaslr within 2 M instructions of the PVH floor",
                         f"{tag} kpack raw ELF, nokaslr", f"{tag} PVH", extra <= 2e6, f"{mega(extra, True)} M")
    microvm_sizes(r)
    microvm_memory(r)
    microvm_smp(r)


def microvm_sizes(r):
    d = r.data
    size = {(row[0], row[1]): int(row[2]) for row in d.rows("sizes.tsv")}
    rows = []
    for tag in r.tags:
        if any((tag, i) not in size for i in ["vmlinux", "stock"] + ELF_IMAGES):
            continue
        stock = size[tag, "stock"]
        rows.append([tag, f"{size[tag, 'vmlinux']:,}", f"{stock:,}"] +
                    [f"{size[tag, i]:,} ({size[tag, i] / stock:.3f})" for i in ELF_IMAGES] +
                    [f"{size[tag, 'elf-raw'] / size[tag, 'vmlinux']:.3f}"])
    if rows:
        r.add("### File sizes", "")
        r.say("Bytes of each file (n = 1: sizes do not vary). In parentheses: kpack ELF / stock bzImage "
              "(below 1 = kpack smaller); the last column, raw ELF / vmlinux.")
        r.add(*table(["kernel", "vmlinux", "stock bzImage", "raw ELF", "lz4 ELF", "zstd ELF", "raw ELF / vmlinux"],
                     rows))


def microvm_memory(r):
    d = r.data
    mem = {(t, i): int(m) for t, i, m in d.rows("microvm-mem.tsv")}
    if not mem:
        return
    r.add("### The smallest `-m` each image boots in", "")
    r.say("`-M pc`, one CPU, `-icount`, the default command line (KASLR on): the smallest guest RAM in MiB that "
          "reaches `/init`, found by bisection over 64..512 MiB in 8 MiB steps (one boot per probe, n = 1; "
          "64 means 64 or less). Ratio: kpack / stock bzImage (below 1 = kpack needs less).")
    rows = []
    for tag in tags_of(d.rows("microvm-mem.tsv")):
        stock = mem.get((tag, "stock"))
        cells = [tag, stock if stock else "–"]
        for image in ("elf-lz4", "elf-zstd", "elf-raw"):
            m = mem.get((tag, image))
            cells.append(f"{m} ({m / stock:.2f})" if m and stock else (m or "–"))
            own = r.data.stock_codec(tag)
            if m and stock and image == f"elf-{own}":
                r.target(f"{tag}: kpack {own} ELF boots in no more RAM than the stock {own} bzImage (pc)",
                         f"{tag} kpack {own} ELF", f"{tag} stock {own}", m <= stock,
                         f"{m} MiB vs {stock} MiB (raw ELF: {mem.get((tag, 'elf-raw'), '–')} MiB)")
        rows.append(cells)
    r.add(*table(["kernel", "stock bzImage (MiB)", "lz4 ELF", "zstd ELF", "raw ELF"], rows))


def microvm_smp(r):
    d = r.data
    rows = []
    for machine in MACHINES:
        for tag, image, every, one, helpers, cell, value, fast, whole in smp_results(d.rows(f"smp-elf-{machine}.tsv")):
            rows.append([machine, tag, image, every.cell(1e6), one.cell(1e6), cell, fast, f"{helpers.median:g}",
                         whole])
            r.target(f"{tag}: {machine} -smp 2, kpack {image[4:]} ELF decode, all CPUs / kpack.cpus=1 "
                     "at most 0.55 (median)", f"{tag} kpack {image[4:]} ELF, all CPUs",
                     f"{tag} kpack {image[4:]} ELF, kpack.cpus=1",
                     noisy_verdict(value is not None and value <= 0.55, [every, one]), cell, "microvm")
    if not rows:
        return
    r.add("### Every CPU against one: the ELF's decode phase on -smp 2", "")
    r.say("As the SeaBIOS and OVMF tables above (`bench/smp.sh`): `-smp 2`, multi-threaded TCG (no `-icount`), "
          "guest RAM preallocated, n interleaved boots with every CPU decoding and n with `kpack.cpus=1`: the "
          "stub's `segments` phase in TSC cycles (`kpack.debug`; median, half the range, n; a bimodal column "
          "gives each group's median), and the whole stub's ratio.")
    r.load_note("microvm")
    retried_note(r, tuple(f"smp-elf-{machine}" for machine in MACHINES))
    r.add(*table(["machine", "kernel", "image", "all CPUs (M cycles)", "kpack.cpus=1 (M cycles)",
                  ratio_head("all / one"), "fast clusters' ratio", "frames by the helper (median)",
                  "whole stub, all / one"], rows))


HEADLINE_INTRO = (
    "Debian's cloud kernels (Debian 12's 6.1, the newest of Debian 13's backports) under QEMU TCG `-kernel`; "
    "instruction counts are under `-icount shift=0,sleep=off` (guest "
    "TSC = instructions, repeatable); \"pre-kernel cost\" is the TSC at `/init` minus that of a PVH boot of the same "
    "vmlinux (no decompressor at all). Each row says the path, the guest's CPU count and CPU model it was measured "
    "on; the section of BENCHMARKS.md it comes from has the details.")


def headline(r):
    """The rows the README quotes, and the sentences that summarize them, computed from the tables."""
    rows, said = [], []
    tag = "6.1"
    if r.legacy and (tag, "pvh") in r.legacy[0]:
        base, cpu_max = r.legacy
        raw = base[tag, "raw"].median - base[tag, "pvh"].median
        rows.append([f"{tag} cloud, raw", "SeaBIOS `-kernel` (16-bit entry)", "1, qemu64",
                     f"/init at {base[tag, 'raw'].cell(1e6)} M instr", f"PVH {base[tag, 'pvh'].cell(1e6)} M",
                     later(base[tag, "raw"], base[tag, "pvh"], "instr"), "Legacy boot"])
        said.append(f"With one CPU a raw image reaches the kernel's `/init` "
                    f"{figure(abs(raw) / 1e6, n=min(base[tag, 'raw'].n, base[tag, 'pvh'].n))} M guest instructions "
                    f"{when(raw)} a boot of the same `vmlinux` with no decompressor at all.")
        lz4 = {}
        for model, series in (("qemu64", base), ("`-cpu max`", cpu_max)):
            if (tag, "lz4") in series:
                mine, stock = series[tag, "lz4"], series[tag, "stock"]
                lz4[model] = later(mine, stock, "instructions")
                rows.append([f"{tag} cloud, lz4", "SeaBIOS `-kernel`", f"1, {model}",
                             f"/init at {mine.cell(1e6)} M instr", f"stock lz4 {stock.cell(1e6)} M",
                             later(mine, stock, "instr"), "Legacy boot"])
        said.append("An lz4 image, which checks the XXH3 digest of every frame where the stock image checks nothing, "
                    "reaches `/init` " + " and ".join(f"{v} than the stock lz4 image with {m}" for m, v in lz4.items())
                    + ".")
    for key in (("SeaBIOS `-kernel`", tag, "lz4"), ("SeaBIOS `-kernel`", tag, "zstd"), ("OVMF `-kernel`", tag, "lz4"),
                ("OVMF `-kernel`", tag, "zstd")):
        if key in r.smp:
            every, one, cell, fast = r.smp[key]
            rows.append([f"{tag} cloud, {key[2]}, decode phase", f"{key[0]}, multi-threaded TCG", "2, qemu64",
                         f"{every.cell(1e6)} M TSC cycles", f"{one.cell(1e6)} M with `kpack.cpus=1`",
                         f"all / one {cell}" + (f" (fast clusters: {fast})" if fast != "–" else ""),
                         "Every CPU against one"])
    paths = [(f, n) for f, n in (("SeaBIOS `-kernel`", "SeaBIOS"), ("OVMF `-kernel`", "OVMF")) if (f, tag, "lz4") in r.smp]
    if paths:
        said.append("With two CPUs (multi-threaded TCG, interleaved boots) its decode phase takes, in TSC cycles "
                    "over those with `kpack.cpus=1`, " + " and ".join(
                        (f"{r.smp[f, tag, 'lz4'][2]} ({n})" if r.smp[f, tag, "lz4"][3] == "–" else
                         f"{r.smp[f, tag, 'lz4'][3]} between the fast clusters of bimodal boots ({n})")
                        for f, n in paths) + ".")
    if r.efi and (tag, "stock") in r.efi:
        own = r.data.stock_codec(tag)
        stock = r.efi[tag, "stock"]
        efi = {i: r.efi[tag, i] for i in ("lz4", "raw-compact") if (tag, i) in r.efi}
        names = {"lz4": "an lz4 image", "raw-compact": "a raw image in the compact layout (`--layout compact`)"}
        for image, sample in efi.items():
            rows.append([f"{tag} cloud, {image.replace('-compact', ' (compact)')}", "OVMF `-kernel` (PE entry)",
                         "1, qemu64",
                         f"/init at {sample.cell(1e6)} M instr", f"stock {own} {stock.cell(1e6)} M",
                         later(sample, stock, "instr"), "OVMF `-kernel`"])
        said.append("Under UEFI (OVMF `-kernel`, one CPU) " + ", ".join(
            f"{names[i]} reaches `/init` {later(v, stock, 'instructions')} than the "
            f"stock {own} image" for i, v in efi.items()) + ".")
    if r.xz_costs:
        xz_cost, stock_cost = r.xz_costs
        pct = 100 * (xz_cost - stock_cost) / stock_cost
        rows.append(["6.1 generic, xz", "SeaBIOS `-kernel`", "1, qemu64", f"{mega(xz_cost)} M pre-kernel",
                     f"stock xz {mega(stock_cost)} M", f"{abs(pct):.0f} % {'fewer' if pct < 0 else 'more'}",
                     "xz"])
        said.append(f"An xz image of the generic kernel costs {abs(pct):.0f} % {'fewer' if pct < 0 else 'more'} "
                    "instructions before the kernel than the stock xz image.")
    newest = newest_tag(r.tags)
    if newest != tag:
        said += newest_kernel_rows(r, newest, rows)
    sized = [("6.1 generic", r.xz_sizes, "xz")] + [(f"{t} cloud", r.sizes and {
        i: b for (k, i), (b, _) in r.sizes.items() if k == t}, r.data.stock_codec(t)) for t in dict.fromkeys((tag, newest))]
    for name, size, image in sized:
        if size and image in size:
            delta = 100 * (size[image] - size["stock"]) / size["stock"]
            rows.append([f"{name}, {image}, image bytes (relocation table included)", "–", "–", f"{size[image]:,}",
                         f"stock {image} {size['stock']:,}", f"{abs(delta):.2f} % {'smaller' if delta < 0 else 'larger'}",
                         "xz" if name == "6.1 generic" else "Image and stub sizes"])
    return rows, said


def newest_tag(tags):
    """The newest kernel series among TAGS ("7.3" over "6.12" over "6.1"), or "6.1" without any."""
    series = [t for t in tags if re.fullmatch(r"\d+\.\d+", t)]
    return max(series, key=lambda t: tuple(map(int, t.split("."))), default="6.1")


def newest_kernel_rows(r, tag, rows):
    """The headline's rows for the newest kernel, whose stock image need not be lz4: raw against PVH
    and kpack's image of the stock codec against the stock image, one CPU, qemu64. Its sentences."""
    if not r.legacy or (tag, "pvh") not in r.legacy[0]:
        return []
    base, own = r.legacy[0], r.data.stock_codec(tag)
    raw, pvh, stock = base.get((tag, "raw")), base[tag, "pvh"], base.get((tag, "stock"))
    said = []
    if raw:
        rows.append([f"{tag} cloud, raw", "SeaBIOS `-kernel` (16-bit entry)", "1, qemu64",
                     f"/init at {raw.cell(1e6)} M instr", f"PVH {pvh.cell(1e6)} M", later(raw, pvh, "instr"),
                     "Legacy boot"])
    if stock and (tag, own) in base:
        mine = base[tag, own]
        rows.append([f"{tag} cloud, {own}", "SeaBIOS `-kernel`", "1, qemu64", f"/init at {mine.cell(1e6)} M instr",
                     f"stock {own} {stock.cell(1e6)} M", later(mine, stock, "instr"), "Legacy boot"])
        said.append(f"On {tag}, whose stock image is {own}, kpack's {own} image reaches `/init` "
                    f"{later(mine, stock, 'instructions')} than the stock image.")
    return said


def headline_block(r, rows, said):
    missed = [t[0] for t in r.targets if t[3].startswith("**no")]
    undecided = [f"{t[0]} ({t[3][len('undecided: '):]})" for t in r.targets if t[3].startswith("undecided")]
    if not rows:
        return [prose("No headline figures: this directory has no run of the legacy, efi, smp or xz parts "
                      "(`bench/run.sh`).")]
    block = [prose(HEADLINE_INTRO), "", prose(" ".join(said)), ""]
    block += table(["kernel, image", "path", "guest CPUs, CPU model", "kpack", "compared with", "kpack against it",
                    "BENCHMARKS.md section"], rows)
    if r.targets:
        block.append(prose("Targets not met in this run: " + ("; ".join(missed) if missed else "none") + "."))
        if undecided:
            block += ["", prose("Targets this run cannot decide: " + "; ".join(undecided) + ".")]
    return block


def header(r):
    d = r.data
    stamp = re.match(r"`(.*)` at (.*) on (.*)", d.stamp)
    command, commit, date = stamp.groups() if stamp else ("?", "?", "?")
    kernels = ", ".join(d.text(t, "kernel.txt").strip() for t in r.tags + ["generic"] if d.text(t, "kernel.txt"))
    return ["# kpack benchmarks", "", "```", f"command:  {command}", f"commit:   {commit}", f"date:     {date}",
            f"machine:  {d.cpu}, {d.cores} cores; {d.qemu}, TCG; host kernel {d.host_kernel}",
            f"load:     {d.load or 'not recorded'} (1/5/15-minute load averages; -icount figures do not depend "
            "on it, wall times and multi-CPU ratios do: each of their sections says its own peak)",
            f"kernels:  {kernels}", "```", "",
            prose("Written by `bench/run.sh` (through `bench/report.py`) from the raw data it keeps in its output "
            "directory: every table and figure here is the script's, none is edited by hand; rerun the command to "
            "regenerate it. Each section names the script that measured it, and the run, when that was an earlier "
            "one than the header's (`--only` runs only some parts). Unless a table says otherwise a guest is "
            "`qemu-system-x86_64 -m 512M -nic none -kernel IMAGE -initrd initramfs.cpio.gz -append \"console=ttyS0 "
            "panic=-1 kpack.debug\"` with one CPU and QEMU's default CPU model (qemu64), and PVH is the same vmlinux "
            "booted as an ELF (`-kernel vmlinux`: no decompressor, the floor). Measurements of earlier commits, "
            "not regenerated: [doc/benchmark-history.md](doc/benchmark-history.md)."), "",
            prose("How figures are stated ([bench/README.md](bench/README.md#statistics-rules)): a figure is the "
                  "median of its n runs and carries that n; from 3 runs on, half their range follows it (`1486.4 "
                  "±0.3 (n=3)`), and the range's first digit is the figure's last; `-icount` boots repeat exactly, so n=1 is exact there. A sample "
                  "whose runs fall into two separate groups is written `bimodal: A (n=..) / B (n=..)`, never as one "
                  "median. Every ratio is time of kpack (or of the variant named first) over the reference's: below "
                  "1, kpack is faster."), ""]


def svg(d, costs):
    """Horizontal bars of pre-kernel cost per image, one group per kernel."""
    bar, gap, left, width = 18, 4, 120, 520
    top = max(costs.values(), default=1) or 1
    y, parts = 40, []
    for tag in tags_of([k for k in costs]):
        parts.append(f'<text x="8" y="{y}" font-weight="bold">{tag} cloud kernel (stock: {d.stock_codec(tag) or "?"})</text>')
        y += 10
        for image in [i for i in IMAGES if (tag, i) in costs]:
            w = max(1, width * max(costs[tag, image], 0) / top)
            colour = {"pvh": "#888", "stock": "#c0392b", "raw": "#27ae60"}.get(image, "#2980b9")
            label = image if image in ("pvh", "stock") else "kpack " + image
            parts.append(f'<text x="{left - 6}" y="{y + bar - 5}" text-anchor="end">{label}</text>')
            parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar}" fill="{colour}"/>')
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 5}">{costs[tag, image] / 1e6:.1f} M</text>')
            y += bar + gap
        y += 24
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{y}" '
            'font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n'
            '<text x="8" y="18" font-size="14">Pre-kernel cost: guest instructions before /init minus PVH '
            '(QEMU -icount, qemu64, one CPU)</text>\n')
    with open(d.path("prekernel.svg"), "w") as f:
        f.write(head + "\n".join(parts) + "\n</svg>\n")


def main():
    out = sys.argv[1]
    r = Report(Data(out))
    costs = legacy(r)
    if costs:
        r.add("![pre-kernel cost](bench/prekernel.svg)", "")
    for part in (efi, smp, host, sizes, pack, kaslr, xz, setup, microvm):
        part(r)
    rows, said = headline(r)
    block = headline_block(r, rows, said)
    targets = table(["target", "kpack", "reference", "met", "measured"], r.targets)
    document = header(r) + ["## Headline", "", "The table README.md quotes (spliced between its "
                            "`<!-- bench:headline -->` markers by the same run).", ""] + block + [""]
    document += r.lines + ["## Targets", "", prose(
        "Each target against this file's figures: kpack's figure and the reference it is held to, always the same "
        f"kernel and, where the reference is a stock image or a codec's tool, kpack's own codec. Targets on wall "
        f"times and multi-CPU ratios need n >= {MIN_NOISY_N} and a unimodal sample; otherwise they are "
        "undecided."), ""] + targets
    with open(os.path.join(out, "BENCHMARKS.md"), "w") as f:
        f.write("\n".join(document).rstrip("\n") + "\n")
    with open(os.path.join(out, "headline.md"), "w") as f:
        f.write("\n".join(block).rstrip("\n") + "\n")
    if costs:
        svg(r.data, costs)


if __name__ == "__main__":
    main()
