#!/usr/bin/env bash
# publish-selftest.sh — bench/publish.sh on a synthetic bench/run.sh directory: it keeps the data
# files and the serial logs cut to their `kpack:` lines, and leaves out the images, kernels,
# initramfs, failed boots' logs, QEMU's stderr, temporary files and the reports, then replaces what
# RESULTS held.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "publish-selftest: FAIL: $*" >&2; exit 1; }
work=$(mktemp -d -t kpack-publish.XXXXXX)
trap 'rm -rf "$work"' EXIT

out=$work/out
mkdir -p "$out/stamps" "$out/load" "$out/6.1"
printf '6.1\tlz4\t13578240\t13578240\n' > "$out/sizes.tsv"
echo 'run at abc1234' > "$out/stamps/smp"
printf '1\t0.5\n' > "$out/load/smp"
echo 'codec zstd' > "$out/6.1/host.txt"
printf 'SeaBIOS\r\nkpack: segments bytes=1 cycles=2\r\n[    0.000000] Linux version 6.1\r\nkpack: lz4 total cycles=3\r\n' \
    > "$out/6.1/lz4.smp.log"
for junk in 6.1/lz4.img 6.1/.zstd.img.kpack-AbC123 6.1/vmlinux 6.1/vmlinux.relocs initramfs.cpio.gz \
    6.1/lz4.smp.log.failed1 6.1/lz4.smp.log.first 6.1/lz4.efi0.log.stderr BENCHMARKS.md headline.md prekernel.svg; do
    echo junk > "$out/$junk"
done
results=$work/results
mkdir -p "$results"
echo stale > "$results/stale.tsv"

"$repo/bench/publish.sh" "$out" "$results" 2>/dev/null || fail "bench/publish.sh failed"
kept=$(cd "$results" && find . -type f | sort | tr '\n' ' ')
want="./6.1/host.txt ./6.1/lz4.smp.log ./load/smp ./sizes.tsv ./stamps/smp "
[[ $kept == "$want" ]] || fail "kept '$kept', not '$want'"
cmp -s "$results/sizes.tsv" "$out/sizes.tsv" || fail "sizes.tsv changed on the way"
printf 'kpack: segments bytes=1 cycles=2\r\nkpack: lz4 total cycles=3\r\n' | cmp -s - "$results/6.1/lz4.smp.log" ||
    fail "the serial log is not cut to its kpack: lines"
[[ ! -e $results.new ]] || fail "the staging directory was left behind"
if "$repo/bench/publish.sh" "$work/missing" "$results" 2>/dev/null; then fail "a missing DIR was published"; fi
[[ -f $results/sizes.tsv ]] || fail "a refused call touched RESULTS"
echo "publish-selftest: PASS"
