#!/usr/bin/env bash
# bench/publish.sh DIR [RESULTS] — DIR's raw data (a bench/run.sh output directory) into RESULTS
# (default bench/results, which is committed): without what every run remakes (images, kernels,
# the initramfs) or what bench/report.py does not read (QEMU's stderr), each serial log cut to the
# stub's `kpack:` lines (a few hundred KB in all). bench/run.sh calls it after its parts, unless
# --no-write, and seeds its directory from bench/results before them, so that `--only` on a fresh
# clone keeps the other parts' data. bench/checks/publish-selftest.sh holds what it keeps.
set -euo pipefail

[[ ($# -eq 1 || $# -eq 2) && -d $1 ]] || { echo "usage: $0 DIR [RESULTS]" >&2; exit 2; }
out=$(cd "$1" && pwd)
results=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/results}
staged=$results.new
rm -rf "$staged"
mkdir -p "$staged"
while IFS= read -r -d '' file; do
    mkdir -p "$staged/$(dirname "$file")"
    if [[ $file == *.log ]]; then
        grep -a 'kpack:' "$out/$file" > "$staged/$file" || true
    else
        cp "$out/$file" "$staged/$file"
    fi
done < <(cd "$out" && find . -type f ! -name '.*' ! -name '*.img' ! -name '*.img.*' ! -name vmlinux \
    ! -name '*.relocs' ! -name '*.cpio.gz' ! -name '*.failed[0-9]' ! -name '*.first' ! -name BENCHMARKS.md \
    ! -name headline.md ! -name prekernel.svg ! -name '*.stderr' -printf '%P\0')
rm -rf "$results"
mv "$staged" "$results"
echo "bench/publish.sh: $results holds $out's data ($(du -sh "$results" | cut -f1)); commit it" >&2
