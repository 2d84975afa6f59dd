#!/usr/bin/env python3
"""bench-fixture.py OUT — a small results directory in bench/run.sh's layout, every part present, for
bench/report.py to render without a run: one -icount boot per qemu64 figure, 3 with -cpu max, 5
wall rounds, 10 SMP rounds (zstd's kpack.cpus=1 boots in a fast and a slow group, as SeaBIOS's
did in the run behind issue 34), 5 pack runs, and a load above the cores during the pack part.
The values are shaped after a real `bench/run.sh --quick`; none of them is a measurement."""
import os
import sys

out = sys.argv[1]
STAMP = "`bench/run.sh --quick` at 0000000 on 2026-01-01 00:00 UTC"


def write(name, text):
    path = os.path.join(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def tsv(name, rows):
    write(name, "".join("\t".join(str(c) for c in row) + "\n" for row in rows))


def stub_log(total, segments, started=2_500_000):
    return (f"kpack: segments bytes=46294800 cycles={segments}\n"
            f"kpack: relocated bytes=0 cycles=3200000\n"
            f"kpack: lz4, 1 cpus (4 frames), entry 1000000, total cycles={total}, started at tsc={started}\n"
            "KPACK_INIT_OK tsc=1\n")


write("run.txt", f"{STAMP}\nAMD EPYC\n2\nQEMU emulator version 7.2.22\n6.18.0\n"
      "1.49 1.70 1.52 at the start, 1.27 1.21 1.27 at the end\n")
for part in ("images", "legacy", "efi", "smp", "host", "pack", "kaslr", "xz", "setup", "microvm"):
    write(f"stamps/{part}", STAMP + "\n")
    tsv(f"load/{part}", [[1767225600 + 10 * i, 3.4 if part == "pack" else 1.2] for i in range(3)])
write("6.1/kernel.txt", "vmlinuz-6.1.0-57-cloud-amd64\n")
write("generic/kernel.txt", "vmlinuz-6.1.0-57-amd64\n")
# The newest kernel, whose stock image is zstd (run.sh records each stock codec from `kpack info`).
write("7.3/kernel.txt", "vmlinuz-7.3.4+deb13-cloud-amd64\n")
write("7.3/stock-codec.txt", "zstd\n")
write("6.1/stock-codec.txt", "lz4\n")

sizes = {"vmlinux": 52431728, "stock": 14190528, "raw": 31547392, "gzip": 11493888, "lz4": 14178656,
         "zstd": 10116096, "xz": 7922176, "elf-raw": 46300000, "elf-lz4": 14200000, "elf-zstd": 10100000}
sizes_7 = {"vmlinux": 62096432, "stock": 13965248, "raw": 62197760, "gzip": 17801216, "lz4": 22191616,
           "zstd": 14938112, "xz": 11540992, "elf-raw": 62100000, "elf-lz4": 22200000, "elf-zstd": 14900000}
tsv("sizes.tsv", [["6.1", i, b, b] for i, b in sizes.items()] + [["7.3", i, b, b] for i, b in sizes_7.items()])
tsv("stubs.tsv", [[s, b] for s, b in (("stub-raw", 173408), ("stub-gzip", 214448), ("stub-lz4", 243040),
                                        ("stub-zstd", 382464), ("stub-xz", 227008), ("setup16", 9216))])

init = {"pvh": 1461_700_000, "stock": 1563_700_000, "raw": 1466_600_000, "gzip": 2110_100_000,
        "lz4": 1561_400_000, "zstd": 1957_200_000, "xz": 3969_100_000}
init_7 = {"pvh": 1650_000_000, "stock": 2599_600_000, "raw": 1654_200_000, "lz4": 1805_700_000,
          "zstd": 2409_500_000}
tsv("icount.tsv", [["6.1", i, 0, t] for i, t in init.items()] + [["7.3", i, 0, t] for i, t in init_7.items()])
tsv("icount-max.tsv", [["6.1", i, run, t + 24_700_000 + 300_000 * run] for i, t in init.items() for run in range(3)])
for image, t in init.items():
    if image not in ("pvh", "stock"):
        write(f"6.1/{image}.icount0.log", stub_log(t - init["pvh"] - 1_000_000, t - init["pvh"] - 4_300_000))
wall = {"pvh": 1.96, "stock": 2.61, "raw": 2.01, "gzip": 2.46, "lz4": 2.45, "zstd": 2.29, "xz": 5.40}
tsv("wall.tsv", [["6.1", i, run, f"{s + 0.03 * run:.6f}"] for run in range(5) for i, s in wall.items()])

efi = {"stock": 4047_000_000, "raw": 4040_800_000, "lz4": 4045_700_000, "zstd": 4429_100_000}
tsv("efi.tsv", [["6.1", i, 0, t] for i, t in efi.items()])
for image in efi:
    write(f"6.1/{image}.efi0.log", stub_log(100_000_000, 97_000_000, 2_465_700_000))
# A log an earlier run with more boots left (efi.tsv holds run 0 only): the report must not read it.
write("6.1/lz4.efi1.log", stub_log(100_000_000, 97_000_000, 9_999_900_000))


def smp_rows(fast_one, slow_one=None):
    """10 interleaved rounds; kpack.cpus=1 bimodal when SLOW_ONE is given (6 fast, 4 slow boots). The
    whole stub takes 30 M cycles more with every CPU (waking them included), 22 M more with one."""
    for image, every, one in (("lz4", 109_500_000, 197_800_000), ("zstd", 537_300_000, fast_one)):
        for run in range(10):
            slow = slow_one and image == "zstd" and run % 5 in (1, 3)
            one_run = (slow_one if slow else one) + 1_500_000 * run
            yield ["6.1", image, "all", run, every + 1_000_000 * run, 19, every + 1_000_000 * run + 30_000_000]
            yield ["6.1", image, "one", run, one_run, 0, one_run + 22_000_000]


tsv("smp.tsv", smp_rows(724_400_000, 1_079_300_000))
tsv("smp-ovmf.tsv", smp_rows(724_400_000, 1_079_300_000))
# One OVMF boot the kernel failed after the stub's work, booted again (bench/smp.sh kernel_fault).
tsv("retried.txt", [["smp-ovmf", "6.1", "lz4", "-", "the kernel failed after the stub's work: "
                     "traps: double fault"]])

write("6.1/host.txt", """# 6.1/vmlinux, 15 runs, median CPU ms; ratios are throughput relative to the engine's
codec      image   segments    engine   library     stock    memcpy  eng/lib  eng/stk  moved output
raw     30735360   46294800      2.00      1.56      2.99      1.59    0.782    1.497 30538044 ok
gzip    10681856   46294800    118.01    118.91    120.62      0.00    1.008    1.022      0 ok
lz4     13467136   46294800      7.15      7.95      9.04      0.00    1.112    1.264      0 ok
zstd     9481216   46294800     36.71     35.63     37.24      0.00    0.971    1.014      0 ok
zstd  engine wall ms: 1 thread 40.12, 2 threads 22.51, speedup 1.78x
xz       7818240   46294800    488.24    485.41    486.55      0.00    0.994    0.997      0 ok

# verification, median CPU ms
codec    engine   library    packed   decoded       sum     tails  eng/lib  eng/l+t
lz4        7.15      7.95      0.45      1.11      0.53      0.36    0.899    0.861
zstd      36.71     35.63      0.33      1.17      0.34      0.38    1.030    1.020

# where the digest runs, median CPU ms
codec     alone    before     after   +before    +after
lz4        7.44      7.89      7.75      0.45      0.31
zstd      35.79     36.37     36.14      0.58      0.35
""")

tsv("pack.tsv", [["6.1", codec, tool, run, f"{s * (1 + 0.02 * run):.6f}"]
                 for codec, k, c in (("gzip", 2.34, 3.56), ("lz4", 1.02, 0.97), ("zstd", 6.54, 11.44))
                 for run in range(5) for tool, s in (("kpack", k), ("cli", c))])

stub = {"raw": (3_900_000, 7_190_000), "gzip": (641_250_000, 647_660_000), "lz4": (100_820_000, 102_660_000),
        "zstd": (482_330_000, 495_760_000)}
for setting, column in (("off", 0), ("on", 1)):
    tsv(f"kaslr-{setting}.tsv", [["6.1", i, 0, init[i] - 3_000_000 * (1 - column)] for i in stub])
    for image, totals in stub.items():
        write(f"6.1/{image}.kaslr-{setting}0.log", stub_log(totals[column], totals[column] - 3_200_000))

# The raw image against PVH at 7 timer phases (bench/kaslr.sh): differences 0.5 to 2.6 M, median 1.6 M.
phase_over = (1_652_000, 594_000, 1_697_000, 1_632_000, 2_640_000, 521_000, 1_597_000)
tsv("kaslr-phase.tsv", [row for run, over in enumerate(phase_over)
                        for row in (["6.1", "pvh", run, 1461_000_000 + 1000 * run],
                                    ["6.1", "raw", run, 1461_000_000 + 1000 * run + over])])

tsv("xz-sizes.tsv", [["generic", "stock", 8247232], ["generic", "xz", 8245248], ["generic", "zstd", 10582528]])
tsv("xz.tsv", [["generic", "pvh", 0, 1600_600_000], ["generic", "stock", 0, 6093_400_000],
               ["generic", "xz", 0, 4206_000_000]])
write("generic/xz.xz0.log", stub_log(2605_100_000, 2601_400_000))
tsv("xz-pack.tsv", [["generic", tool, run, f"{s + 0.1 * run:.6f}"] for run in range(5)
                    for tool, s in (("kpack", 8.9), ("xz", 18.5))])
write("generic/host-xz.txt", """# generic/vmlinux, 1 runs, median CPU ms
codec      image   segments    engine   library     stock    memcpy  eng/lib  eng/stk  moved output
xz       7818240   46294800    599.36    618.47    620.00      0.00    1.032    1.034      0 ok
""")

tsv("setup.tsv", [["6.1", "pvh", 0, init["pvh"]], ["6.1", "raw", 0, init["raw"]]])
write("6.1/raw.setup0.log", stub_log(7_190_000, 3_900_000, 8_270_000))

microvm = []
for machine, extra in (("pc", 0), ("microvm", -60_000_000)):
    for image, setting, t in (("pvh", "pvh", 1461_700_000), ("stock", "kaslr", 1563_700_000),
                              ("elf-raw", "nokaslr", 1462_900_000), ("elf-raw", "kaslr", 1467_000_000),
                              ("elf-lz4", "nokaslr", 1560_000_000), ("elf-lz4", "kaslr", 1563_500_000),
                              ("elf-zstd", "nokaslr", 1950_000_000), ("elf-zstd", "kaslr", 1953_200_000)):
        for run in range(3 if setting == "kaslr" else 1):
            microvm.append(["6.1", machine, image, setting, run, t + extra + 100_000 * run])
tsv("microvm.tsv", microvm)
tsv("microvm-mem.tsv", [["6.1", "stock", 136], ["6.1", "elf-lz4", 128], ["6.1", "elf-zstd", 120],
                        ["6.1", "elf-raw", 112]])
for machine in ("pc", "microvm"):
    tsv(f"smp-elf-{machine}.tsv", [["6.1", "elf-lz4"] + row[2:] for row in smp_rows(197_800_000) if row[1] == "lz4"])
