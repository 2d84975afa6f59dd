#!/usr/bin/env bash
# check-bench-figures.sh [README.md BENCHMARKS.md] — every number in README.md's
# `<!-- bench:headline -->` block (bench/run.sh's) and `<!-- bench:verdict -->` block (written by
# hand, quoting figures) must appear in BENCHMARKS.md, the file bench/run.sh writes with the command
# that measured it: a figure edited by hand in the README, or a BENCHMARKS.md regenerated without
# splicing the README or rewording the verdict, fails. Run without arguments, it first checks that it
# catches a changed figure, then checks the repository's two files.
# Then the statistics rules of bench/README.md: their self-test (bench-stats-selftest.sh:
# bench/report.py on a synthetic run, and bad reports that must fail), then the repository's
# BENCHMARKS.md (check-bench-stats.py: no spread from fewer than 3 runs, no target against another
# codec's or kernel's figure).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The numbers of a text, one per line: 1,234, 12.5 and 1.35x whole, not the digits inside words or
# hashes (x86, ff4e513) nor a part of a longer number.
numbers() { grep -oP '(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![.,]?\d)(?=x?(?!\w))' || true; }

check() {  # README BENCHMARKS: names each figure of the blocks missing from BENCHMARKS
    local readme=$1 benchmarks=$2 block missing=0 n name known
    known=$(numbers < "$benchmarks" | sort -u)
    for name in headline verdict; do
        grep -qxF "<!-- bench:$name -->" "$readme" || { echo "check-bench-figures: $readme has no bench:$name block" >&2; return 1; }
        block=$(sed -n "/^<!-- bench:$name -->\$/,/^<!-- \/bench:$name -->\$/p" "$readme")
        [[ -n $(numbers <<<"$block") ]] || { echo "check-bench-figures: the bench:$name block of $readme has no figure" >&2; return 1; }
        while read -r n; do
            grep -qxF "$n" <<<"$known" || { echo "check-bench-figures: $readme's $name quotes $n, which $benchmarks does not have" >&2; missing=1; }
        done < <(numbers <<<"$block" | sort -u)
    done
    return "$missing"
}

if [[ $# -eq 2 ]]; then check "$1" "$2"; exit; fi

# Self-check: a figure of each block changed by hand (its last digit bumped) must fail.
work=$(mktemp -d -t kpack-bench-figures.XXXXXX)
trap 'rm -rf "$work"' EXIT
for name in headline verdict; do
    range="/^<!-- bench:$name -->\$/,/^<!-- \\/bench:$name -->\$/"
    figure=$(sed -n "${range}p" "$repo/README.md" | grep -oP '\d+\.\d+' | tail -n1)
    [[ -n $figure ]] || { echo "check-bench-figures: FAIL: README.md's $name block has no decimal figure to alter" >&2; exit 1; }
    changed=${figure%?}$(( (${figure: -1} + 1) % 10 ))
    while grep -qP "(?<![\w.,])${changed//./\\.}(?![\w])" "$repo/BENCHMARKS.md"; do   # pick a figure BENCHMARKS.md lacks
        changed=${changed}1
    done
    sed "${range}s/${figure//./\\.}/$changed/" "$repo/README.md" > "$work/README.md"
    if check "$work/README.md" "$repo/BENCHMARKS.md" 2>/dev/null; then
        echo "check-bench-figures: FAIL: $figure changed to $changed in README.md's $name went unnoticed" >&2
        exit 1
    fi
done
check "$repo/README.md" "$repo/BENCHMARKS.md"
"$repo/bench/checks/bench-stats-selftest.sh"
python3 "$repo/bench/checks/check-bench-stats.py" "$repo/BENCHMARKS.md" ||
    { echo "check-bench-figures: BENCHMARKS.md breaks the statistics rules of bench/README.md (above); rerun bench/run.sh --quick" >&2; exit 1; }
echo "check-bench-figures: PASS"
