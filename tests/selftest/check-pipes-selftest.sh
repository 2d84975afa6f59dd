#!/usr/bin/env bash
# check-pipes-selftest.sh — proves scripts/check-pipes.sh finds each early-leaving grep it exists
# for, in a pipefail script and in a sourced library, and passes the here-string form and a
# POSIX script without pipefail.
set -euo pipefail

check=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/check-pipes.sh
work=$(mktemp -d -t kpack-pipes.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-pipes-selftest: FAIL: $*" >&2; exit 1; }

# The failure it exists for, first shown: a long writer into grep -m1 dies of SIGPIPE.
status=0
bash -c 'set -o pipefail; seq 1 2000000 | grep -m1 "^5$" > /dev/null' || status=$?
[[ $status -eq 141 ]] || fail "seq | grep -m1 under pipefail exited $status, not 141 (SIGPIPE)"

bad=(
    "tr -d '\\r' < log | grep -a -m1 '^kpack: cpus: '"
    "sed -n '/x/,\$p' log | grep -aq 'Linux version'"
    "sbverify --list f | grep -qxF signature"
    "cat log | grep --quiet BdsDxe"
    "cat log | grep -E --max-count=1 x"
)
for line in "${bad[@]}"; do
    printf '#!/usr/bin/env bash\nset -euo pipefail\n%s\n' "$line" > "$work/script.sh"
    "$check" "$work/script.sh" 2> "$work/err" && fail "passed: $line"
    grep -qF "$work/script.sh:3:" "$work/err" || fail "no file:line for: $line"
    printf '# a library: no #! line\n%s\n' "$line" > "$work/lib.sh"
    "$check" "$work/lib.sh" 2> /dev/null && fail "passed in a sourced library: $line"
done

printf '#!/usr/bin/env bash\nset -euo pipefail\n%s\n%s\n' \
    "grep -aq 'Linux version' <<< \"\$(sed -n '/x/,\$p' log)\"" "[[ -n \$a ]] || grep -q x log" > "$work/good.sh"
"$check" "$work/good.sh" > /dev/null || fail "the here-string form or an || was refused"
printf '#!/bin/sh\nset -u\nkpack info "$1" | head -n1 | grep -q x\n' > "$work/posix.sh"
"$check" "$work/posix.sh" > /dev/null || fail "a #! script without pipefail was refused"
echo "check-pipes-selftest: PASS"
