#!/usr/bin/env bash
# check-pipes.sh [ROOT | FILE...] — no shell script that may run under pipefail pipes into a reader
# that may leave early (grep -q, grep -m N). The writer then dies of SIGPIPE whenever it is still
# writing, and pipefail turns that into a failed test one run in many: boot.stats.raw failed CI so
# with `tr < log | grep -m1`. Read from a here-string or a file instead: grep -q X <<< "$(cmd)".
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
if [[ -d $root ]]; then
    mapfile -t files < <(find "$root" -path "$root/build*" -prune -o -path '*/.git' -prune -o -type f \
        \( -name '*.sh' -o -path "$root/.ci/run" -o -path "$root/packaging/kernel/*" \) -print | sort |
        grep -v -e '/check-pipes\.sh$' -e '/check-pipes-selftest\.sh$')  # they quote the pattern on purpose
else
    files=("$@")
fi

status=0
for file in "${files[@]}"; do
    [[ -f $file ]] || continue
    # Scripts that set pipefail, and libraries (no #! line) that run under their sourcer's options.
    grep -q 'pipefail' "$file" || [[ $(head -c 2 "$file") != '#!' ]] || continue
    # A pipe (not ||) into grep whose options hold q or m: -q, -aq, -m1, -a -m 1, --quiet, --max-count.
    if hits=$(grep -nE '(^|[^|])\|[[:space:]]*!?[[:space:]]*grep([[:space:]]+-[a-zA-Z]*[qm]|[[:space:]]+-[^|]*[[:space:]]-[a-zA-Z]*[qm]|[^|]*--(quiet|silent|max-count))' "$file"); then
        sed "s|^|$file:|; s|$|   <- a pipe into an early-leaving grep under pipefail|" <<< "$hits" >&2
        status=1
    fi
done
(( status == 0 )) && echo "check-pipes: ${#files[@]} scripts, no pipe into grep -q or -m under pipefail"
exit $status
