#!/usr/bin/env bash
# include-rules-selftest.sh — proves that scripts/check-includes.py catches what it is for, on a
# small git tree of its own: a clean tree passes; a forbidden include (from a .cc and from a .S), an
# include of a missing path, a folder no rule covers, a stale exception, an allowance no include
# uses, two folders that may include each other and a stale doc table or order each fail with exit 1
# and their one line; a listed exception and a generated header pass.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
top=$(mktemp -d -t kpack-include-rules.XXXXXX)
trap 'rm -rf "$top"' EXIT
work=$top/tree
fail() { echo "include-rules-selftest: FAIL: $*" >&2; exit 1; }
check() { "$repo/scripts/check-includes.py" --root "$work" "$@"; }
put() { mkdir -p "$work/$(dirname "$1")"; printf '%s\n' "${@:2}" > "$work/$1"; }

# expect STATUS LINE [ARGS...]: the checker exits STATUS and, when LINE is set, prints exactly LINE.
expect() {
    local want=$1 line=$2 status=0
    shift 2
    check "$@" > "$work/.out" 2>&1 || status=$?
    [[ $status -eq $want ]] || fail "exit $status, not $want: $(cat "$work/.out")"
    [[ -z $line ]] || [[ $(cat "$work/.out") == "$line" ]] || fail "printed: $(cat "$work/.out"); wanted: $line"
}

put scripts/rules.txt \
    '# low may include formats; high may include low too.' \
    'folder formats/' '  runs host and stub' '  includes' \
    'folder low/' '  runs 64-bit' '  includes formats/' \
    'folder high/' '  runs host' '  includes formats/ low/x.h' \
    'generated low/offsets.h'
put formats/a.h '#pragma once'
put low/x.h '#pragma once' '#include <stdint.h>' '#include "formats/a.h"'
put low/y.S '#include "low/offsets.h"'
put high/z.cc '#include "low/x.h"' '  #  include "formats/a.h"'
put doc/layout.md '# Layout' '<!-- layout:table -->' '<!-- /layout:table -->' 'Prose.' '<!-- layout:order -->' '<!-- /layout:order -->'
git -C "$work" init -q
rules=(--rules scripts/rules.txt)

expect 2 "check-includes: scripts/rules.txt: no <!-- layout:table --> ... <!-- /layout:table --> block" "${rules[@]}" --check-doc scripts/rules.txt
expect 0 "" "${rules[@]}" --update-doc doc/layout.md
grep -qxF '| `low/`     | 64-bit        | `formats/` |' "$work/doc/layout.md" || fail "no low/ row in: $(cat "$work/doc/layout.md")"
grep -qxF 'Prose.' "$work/doc/layout.md" || fail "--update-doc lost the prose"
grep -qxF ' 2  high/     <- formats/ low/' "$work/doc/layout.md" || fail "no high/ line in the order: $(cat "$work/doc/layout.md")"
expect 0 "check-includes: includes follow scripts/rules.txt; doc/layout.md matches it" "${rules[@]}" --check-doc doc/layout.md

# The forbidden include: low/ reaches up into high/.
put high/w.h '#pragma once'
put low/bad.cc '// one' '' '#include "high/w.h"'
expect 1 "low/bad.cc:3: includes high/w.h, which low/ may not include (rules: scripts/rules.txt)" "${rules[@]}"
# high/ may include low/x.h alone.
rm "$work/low/bad.cc"
put high/v.cc '#include "low/y.S"'
expect 1 "high/v.cc:1: includes low/y.S, which high/ may not include (rules: scripts/rules.txt)" "${rules[@]}"
rm "$work/high/v.cc"
put low/y.S '#include "low/offsets.h"' '#include "high/w.h"'
expect 1 "low/y.S:2: includes high/w.h, which low/ may not include (rules: scripts/rules.txt)" "${rules[@]}"

# A listed exception passes, and fails once the include is gone.
printf '%s\n' 'exception low/y.S high/w.h  the offsets come from high' >> "$work/scripts/rules.txt"
expect 0 "check-includes: includes follow scripts/rules.txt" "${rules[@]}"
put low/y.S '#include "low/offsets.h"'
expect 1 "scripts/rules.txt:12: exception no longer needed: low/y.S does not include high/w.h against its rule (remove the line)" "${rules[@]}"
sed -i '$d' "$work/scripts/rules.txt"

# A path that is not there, and one named from its own folder instead of the root.
put high/u.cc '#include "high/missing.h"'
expect 1 "high/u.cc:1: includes high/missing.h, which does not exist (includes name paths from the repository root)" "${rules[@]}"
put high/u.cc '#include "w.h"'
expect 1 "high/u.cc:1: includes w.h, which does not exist (includes name paths from the repository root)" "${rules[@]}"
rm "$work/high/u.cc"

# A folder no rule covers, and a rule over nothing.
put new/n.c 'int main(void) { return 0; }'
expect 1 "new/n.c: no folder line of scripts/rules.txt covers new/" "${rules[@]}"
rm -r "$work/new"
put high/z.cc '#include "formats/a.h"'
sed -i 's|includes formats/ low/x.h|includes formats/ low/gone.h|' "$work/scripts/rules.txt"
expect 1 "scripts/rules.txt:10: low/gone.h does not exist" "${rules[@]}"
sed -i 's|low/gone.h|low/x.h|' "$work/scripts/rules.txt"
# An allowance none of the folder's files uses: high/ no longer includes low/x.h.
expect 1 "scripts/rules.txt:10: high/ may include low/x.h, which none of its files includes (remove it)" "${rules[@]}"
put high/z.cc '#include "low/x.h"' '  #  include "formats/a.h"'

# Two folders that may include each other, each allowance used: a cycle, whatever the files do.
sed -i 's|^  includes formats/$|  includes formats/ high/|' "$work/scripts/rules.txt"
put low/up.cc '#include "high/w.h"'
expect 1 "scripts/rules.txt: the folders' allowances form a cycle: low/ -> high/ -> low/ (each folder may include only folders below it)" "${rules[@]}"
rm "$work/low/up.cc"
sed -i 's|^  includes formats/ high/$|  includes formats/|' "$work/scripts/rules.txt"

# A rule changed without the doc.
sed -i 's|runs 64-bit|runs 32-bit|' "$work/scripts/rules.txt"
expect 1 "doc/layout.md: its layout table is not scripts/rules.txt's (scripts/check-includes.py --update-doc doc/layout.md)" \
    "${rules[@]}" --check-doc doc/layout.md

# The order block edited by hand.
sed -i 's|runs 32-bit|runs 64-bit|' "$work/scripts/rules.txt"
check "${rules[@]}" --update-doc doc/layout.md
sed -i 's|^ 2  high/ .*| 2  high/     <- formats/|' "$work/doc/layout.md"
expect 1 "doc/layout.md: its layout order is not scripts/rules.txt's (scripts/check-includes.py --update-doc doc/layout.md)" \
    "${rules[@]}" --check-doc doc/layout.md
check "${rules[@]}" --update-doc doc/layout.md
sed -i 's|runs 64-bit|runs 32-bit|' "$work/scripts/rules.txt"

# Outside git, or in an ignored folder of another checkout (the Debian build's copy in build-deb/),
# every file is the tree's but those of build directories.
sed -i 's|runs 32-bit|runs 64-bit|' "$work/scripts/rules.txt"
rm -rf "$work/.git"
git -C "$top" init -q
echo 'tree/' > "$top/.gitignore"
put _build/CMakeCache.txt ''
put _build/generated/bad.cc '#include "high/w.h"'
check "${rules[@]}" --check-doc doc/layout.md > "$work/.out" 2>&1 || fail "outside git: $(cat "$work/.out")"
put low/bad.cc '#include "high/w.h"'
if check "${rules[@]}" > /dev/null 2>&1; then fail "outside git, low/bad.cc's include went unnoticed"; fi
echo "include-rules-selftest: PASS"
