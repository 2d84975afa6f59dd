#!/usr/bin/env bash
# check-skips.sh JUNIT_XML [ALLOWLIST] — the tests a ctest run skipped (ctest --output-junit), printed
# as "N skipped: names". Under CI (CI set and not "false") a skip not named in ALLOWLIST
# (tests/allowed-skips.txt by default) fails: a test that did not run must not pass CI.
# Exit: 0 nothing unallowed skipped (or not under CI), 1 a skip not allowed under CI, 2 usage.
set -euo pipefail

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 JUNIT_XML [ALLOWLIST]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
junit=$1 allowlist=${2:-$here/allowed-skips.txt}
[[ -r $junit ]] || { echo "check-skips.sh: cannot read $junit" >&2; exit 2; }

# ctest writes skipped and not-run tests as <testcase name=...> holding a <skipped> element.
mapfile -t skipped < <(python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if case.get("status") in ("notrun", "disabled") or case.find("skipped") is not None:
        print(case.get("name"))
PY
)
source "$here/lib/skip.sh"

if [[ ${#skipped[@]} -eq 0 ]]; then echo "0 skipped"; exit 0; fi
echo "${#skipped[@]} skipped: ${skipped[*]}"
kpack_under_ci || exit 0
unallowed=()
for name in "${skipped[@]}"; do kpack_skip_allowed "$name" "$allowlist" || unallowed+=("$name"); done
if [[ ${#unallowed[@]} -gt 0 ]]; then
    echo "FAIL: skipped under CI and not in $(basename "$allowlist"): ${unallowed[*]}"
    exit 1
fi
