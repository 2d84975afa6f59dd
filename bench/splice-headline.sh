#!/usr/bin/env bash
# splice-headline.sh HEADLINE.md README.md — replaces what README.md's `<!-- bench:headline -->` and
# `<!-- /bench:headline -->` markers enclose with HEADLINE.md (bench/report.py's), so the README
# quotes the figures of the last bench/run.sh and nothing else.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 HEADLINE.md README.md" >&2; exit 2; }
headline=$1 readme=$2
for marker in '<!-- bench:headline -->' '<!-- /bench:headline -->'; do
    grep -qxF "$marker" "$readme" || { echo "splice-headline: $readme has no line '$marker'" >&2; exit 1; }
done
awk -v table="$headline" '
    $0 == "<!-- bench:headline -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- /bench:headline -->" { skip = 0 }
    !skip { print }
' "$readme" > "$readme.new" && mv "$readme.new" "$readme"
