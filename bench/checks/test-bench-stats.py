#!/usr/bin/env python3
"""test-bench-stats.py — bench/stats.py's rules on samples whose answer is known: the bimodal
detector, the spread's n, and digits that stop at the spread. Exit 1 naming the first case that
fails."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from stats import Sample, clusters, figure, places, ratio_cell  # noqa: E402

failures = []


def expect(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


# The detector. Decode cycles (M) of SMP boots: a fast and a slow group, as the SeaBIOS zstd
# kpack.cpus=1 column had them (fastest 724, median 1079).
smp = [724.4, 731.0, 1079.3, 733.2, 1081.0, 728.9, 1084.5, 735.1, 1090.2, 726.3]
expect("two groups are bimodal", clusters(smp), (sorted(smp)[:6], sorted(smp)[6:]))
expect("its cell names both groups", Sample(smp).cell(), "bimodal: 730 ±5 (n=6) / 1083 ±5 (n=4)")
# Unimodal noise: the widest gap is inside the spread.
expect("noise is one group", clusters([2.01, 2.05, 2.02, 2.10, 2.07, 2.04, 2.12, 2.08]), None)
# One far value is an outlier, not a cluster: it widens the range instead.
expect("one outlier is not a group", clusters([109.5, 110.1, 109.9, 110.4, 160.0]), None)
# Two groups closer than 5 % of the median: -icount KASLR draws, not two machine states.
expect("a narrow gap is not bimodal", clusters([1486.0, 1486.1, 1486.8, 1486.9]), None)
# Too few values to hold two groups of two.
expect("three values are never bimodal", clusters([100.0, 101.0, 200.0]), None)
expect("equal values are one group", clusters([5.0] * 6), None)
# A gap only twice the wider group's range is not enough.
expect("a gap of 2 ranges is one group", clusters([100, 110, 130, 140]), None)
expect("a gap of 4 ranges is two", clusters([100, 110, 150, 160]), ([100, 110], [150, 160]))

# The spread: only from 3 values, and always with its n.
expect("n=2 has no spread", Sample([1.0, 2.0]).spread, None)
expect("n=2 cell", Sample([1.0, 2.0]).cell(1, 2), "1.50 (n=2)")
expect("n=1 cell (an exact -icount boot)", Sample([1461_700_000]).cell(1e6), "1461.7 (n=1)")
expect("n=3 cell", Sample([1486.1, 1486.4, 1486.7]).cell(), "1486.4 ±0.3 (n=3)")
try:
    figure(1.0, 0.1, 2, n=2)
    failures.append("a spread with n=2 was written")
except ValueError:
    pass

# Digits stop at the spread's first significant digit, never finer than the unit's.
expect("spread 0.5", places(0.5, 1), 1)
expect("spread 0.04, unit of 2 decimals", places(0.04, 2), 2)
expect("spread 0.004, capped at the unit's 1", places(0.004, 1), 1)
expect("spread 31", figure(1079.3, 31, 1, n=10), "1080 ±30 (n=10)")
expect("spread 310", figure(1079.3, 310, 1, n=10), "1100 ±300 (n=10)")
expect("spread below the last digit", figure(0.938, 0.0002, 3, n=3), "0.938 ±<0.001 (n=3)")
expect("no spread: the unit's digits", figure(2.456, None, 2), "2.46")

# Ratios: time of the first over the second, bimodal when either side is.
expect("ratio of two samples", ratio_cell(Sample([1.0, 1.1, 1.2]), Sample([2.0, 2.0, 2.0])), "0.55 ±0.05 (n=3)")
expect("ratio of a bimodal side", ratio_cell(Sample([500.0] * 10), Sample(smp)), "bimodal")

for f in failures:
    print(f"test-bench-stats: FAIL: {f}", file=sys.stderr)
sys.exit(1 if failures else 0)
