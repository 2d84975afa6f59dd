#!/usr/bin/env bash
# check-doc-samples.sh BUILD_DIR — the ctest docs.samples: every `<!-- sample: COMMAND -->` block of
# README.md and doc/*.md must be what BUILD_DIR's kpack prints now on Debian's 6.1 cloud kernel
# (scripts/render-samples.sh --check). In the same run, so the kernel is packed once, a copy of the
# first doc with a sample, one output line of it altered, must be caught: a check that cannot fail
# proves nothing.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail() { echo "check-doc-samples: FAIL: $*" >&2; exit 1; }

docs=("$repo/README.md" "$repo"/doc/*.md)
first=$(grep -l '^<!-- sample: ' "${docs[@]}" | head -n1) || fail "no doc has a <!-- sample: COMMAND --> block"
work=$(mktemp -d -t kpack-doc-samples.XXXXXX)
trap 'rm -rf "$work"' EXIT
altered=$work/altered-$(basename "$first")
# The first output line of its first sample (the line after `$ COMMAND`) gains a word.
awk '!done && prev ~ /^\$ / { $0 = $0 " altered"; done = 1 } { prev = $0; print }' "$first" > "$altered"
! cmp -s "$first" "$altered" || fail "could not alter a sample of $first"

status=0
"$repo/scripts/render-samples.sh" "$build" --check "${docs[@]}" "$altered" > "$work/out" 2> "$work/err" || status=$?
cat "$work/out" "$work/err"
[[ $status -ne 0 ]] || fail "the altered copy of $first passed the check"
stale=$(sed -n 's/^render-samples: \(.*\): a sample is not what kpack prints now.*/\1/p' "$work/err")
[[ -n $stale ]] || fail "render-samples failed without naming a stale sample (see above)"
[[ $stale == "$altered" ]] || fail "samples differ from what kpack prints now in: $(grep -vxF "$altered" <<< "$stale" | tr '\n' ' ')(scripts/render-samples.sh $build --update-docs rewrites them)"
echo "check-doc-samples: PASS (the altered copy was caught; every sample of the docs is current)"
