#!/usr/bin/env bash
# setup.sh OUT RUNS TAG... — what firmware, loader and the 16-bit setup run before the stub.
#
# The raw image of each kernel TAG boots through SeaBIOS `-kernel` (the 16-bit entry, std VGA, no
# disk) on one CPU under -icount shift=0,sleep=off, RUNS times, beside a PVH boot of the same
# vmlinux (no setup, no stub: the floor). The stub's `kpack.debug` summary says at which TSC, i.e.
# after how many guest instructions, it started: everything SeaBIOS, its -kernel loader and the
# setup ran. Writes OUT/setup.tsv (TAG IMAGE RUN TSC-at-/init) and OUT/TAG/IMAGE.setupN.log;
# bench/report.py reads the start TSC from the logs.
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: $0 OUT RUNS TAG..." >&2; exit 2; }
out=$1 runs=$2
shift 2
ICOUNT_RUNS=$runs KPACK_BENCH_IMAGES="pvh raw" KPACK_BENCH_NAME=setup \
    "$(dirname "${BASH_SOURCE[0]}")/guest.sh" "$out" 0 "$@"
