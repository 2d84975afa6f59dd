#!/usr/bin/env bash
# kaslr.sh OUT RUNS TAG... — what KASLR costs in the guest, per codec and kernel.
#
# Each kpack image of each kernel TAG (OUT/TAG/{raw,gzip,lz4,zstd}.img, packed by bench/run.sh with
# the kernel's relocation table) boots on one CPU under -icount shift=0,sleep=off, where the TSC
# counts guest instructions, RUNS times with KASLR (the default) and RUNS times with nokaslr
# (bench/guest.sh). Writes OUT/kaslr-on.tsv and OUT/kaslr-off.tsv (TAG IMAGE RUN TSC-at-/init) and
# the serial logs OUT/TAG/IMAGE.kaslr-{on,off}N.log, whose `total cycles=` is the stub's own count;
# bench/report.py makes the table. The vmlinux's own PVH boot (OUT/TAG/pvh.img) runs with nokaslr
# too: the floor the raw image is measured against, with the same command line. That distance is
# also measured at 7 timer phases (KPACK_BENCH_PHASE, bench/guest.sh): PVH and raw with nokaslr and
# the same inert word per run, OUT/kaslr-phase.tsv; the report takes the median of the 7 pairs'
# differences, which one pair cannot give (0.5 to 2.6 M on the 6.1 kernel, by phase).
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: $0 OUT RUNS TAG..." >&2; exit 2; }
out=$1 runs=$2
shift 2
guest=$(dirname "${BASH_SOURCE[0]}")/guest.sh
export ICOUNT_RUNS=$runs
KPACK_BENCH_IMAGES="pvh raw gzip lz4 zstd" KPACK_BENCH_NAME=kaslr-off KPACK_BENCH_APPEND=nokaslr \
    "$guest" "$out" 0 "$@"
KPACK_BENCH_IMAGES="raw gzip lz4 zstd" KPACK_BENCH_NAME=kaslr-on "$guest" "$out" 0 "$@"
ICOUNT_RUNS=7 KPACK_BENCH_PHASE=1 KPACK_BENCH_IMAGES="pvh raw" KPACK_BENCH_NAME=kaslr-phase \
    KPACK_BENCH_APPEND=nokaslr "$guest" "$out" 0 "$@"
