#!/usr/bin/env bash
# bench-stats-selftest.sh — the statistics rules of bench/README.md, end to end without a bench run:
# bench/stats.py's cases (bench/checks/test-bench-stats.py), then bench/report.py on a synthetic
# results directory (bench/checks/bench-fixture.py) must write a BENCHMARKS.md that
# check-bench-stats.py passes and that states the fixture's bimodal boots, its undecided target and
# its overloaded part as such, and reads no serial log of a run its .tsv does not hold; and
# check-bench-stats.py must fail on that file spoiled each way it
# guards: a spread from n=2, a spread without n, a target against another codec's stock image, a
# target against another kernel's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
check=$here/check-bench-stats.py
fail() { echo "bench-stats-selftest: FAIL: $*" >&2; exit 1; }

python3 "$here/test-bench-stats.py" || fail "bench/stats.py's cases (above)"

work=$(mktemp -d -t kpack-bench-stats.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$here/bench-fixture.py" "$work/results"
python3 "$repo/bench/report.py" "$work/results" || fail "bench/report.py on the fixture"
good=$work/results/BENCHMARKS.md
python3 "$check" "$good" || fail "the fixture's report breaks the rules (above)"
grep -q '| 6.1 | zstd | 542 ±4 (n=10) | bimodal: 731 ±7 (n=6) / 1086 ±5 (n=4) | bimodal | 0.74 |' "$good" ||
    fail "the bimodal kpack.cpus=1 boots are not reported as bimodal"
grep -q '(zstd, median) | .* | undecided: bimodal |' "$good" || fail "a target on bimodal boots was decided"
grep -q '^\*\*Load:\*\* the 1-minute load average reached 3.4' "$good" || fail "the pack part's overload is not stated"
grep -q '| 6.1 | lz4 | 1.06 ±0.04 (n=5) | `lz4 -12 --favor-decSpeed` |' "$good" || fail "the pack times lack their n or spread"
! grep -q '^| 6.1: kpack zstd image no larger' "$good" || fail "kpack zstd's size is held against the stock lz4 image"
grep -q 'of the PVH floor (SeaBIOS -kernel) | .* | yes | +1.6 M, median of 7 timer phases (+0.5 to +2.6) |' "$good" ||
    fail "the raw image's distance from PVH is not the median of the timer phases"
grep -q '^| 6.1 | lz4 | 4045.7 (n=1) | -1.3 (n=1) | 2465.7 (n=1) |' "$good" ||
    fail "the OVMF table's stub start is not that of the boots efi.tsv holds"
grep -q '| 6.1 | lz4 | 114 ±4 (n=10) | .* | 19 | 0.64 ±0.04 (n=10) |' "$good" ||
    fail "the -smp 2 table lacks the whole stub's ratio"
grep -qF "1 boot of these did not reach \`/init\` and were booted again (bench/smp.sh, \`kernel_fault\`; the table holds the boot that reached it): 6.1 lz4 (smp-ovmf): the kernel failed after the stub's work: traps: double fault." <<< "$(tr '\n' ' ' < "$good")" ||
    fail "the -smp 2 boots booted again are not listed with their reason"

# The newest kernel's targets are its own: kpack zstd against its stock zstd image, and its headline rows.
grep -q '^| 7.3: kpack zstd image no larger than the stock zstd image | 7.3 kpack zstd | 7.3 stock zstd | \*\*no\*\* |' "$good" ||
    fail "the 7.3 kernel's zstd size is not held against its stock zstd image"
! grep -q '^| 7.3: kpack lz4 image no larger' "$good" || fail "7.3's lz4 image is held against its stock zstd image"
grep -q '^| 7.3: kpack zstd reaches /init no later than the stock image (qemu64) | .* | yes |' "$good" ||
    fail "the 7.3 kernel's zstd boot is not held against its stock image"
grep -q '^| 7.3 cloud, zstd | SeaBIOS `-kernel` | 1, qemu64 | /init at 2409.5 (n=1) M instr | stock zstd 2599.6 (n=1) M |' "$good" ||
    fail "the headline has no row for the newest kernel's zstd image"

spoil() {  # NAME SED-SCRIPT: the good report changed by SED-SCRIPT must fail the check
    sed "$2" "$good" > "$work/$1.md"
    cmp -s "$good" "$work/$1.md" && fail "$1: the edit changed nothing"
    if python3 "$check" "$work/$1.md" 2>"$work/$1.err"; then fail "$1 went unnoticed"; fi
    echo "bench-stats-selftest: $1 caught: $(head -n1 "$work/$1.err")"
}
spoil "spread-from-n2" '0,/1486\.7 ±0\.3 (n=3)/s//1486.7 ±0.3 (n=2)/'
spoil "spread-without-n" '0,/1588\.7 ±0\.3 (n=3)/s//1588.7 ±0.3/'
spoil "target-other-codec" 's/^| 6\.1: kpack lz4 image no larger than the stock lz4 image | 6\.1 kpack lz4 |/| 6.1: kpack zstd image no larger than stock | 6.1 kpack zstd |/'
spoil "target-stock-without-codec" 's/| generic kpack xz | generic stock xz |/| generic kpack xz | generic stock |/'
spoil "target-other-kernel" 's/| generic kpack xz | generic stock xz |/| generic kpack xz | 6.1 stock xz |/'
echo "bench-stats-selftest: PASS"
