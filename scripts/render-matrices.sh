#!/usr/bin/env bash
# render-matrices.sh BUILD_DIR JUNIT.xml [--update-docs] — the loader, EFI and SMP matrices of one
# ctest run (`ctest --output-junit`, as scripts/test.sh writes it), each headed by the commit it
# ran on (this checkout's HEAD, or KPACK_MATRIX_COMMIT when the run was of another clone, e.g. a
# fresh-clone .ci/run), into BUILD_DIR/matrices/{loaders,efi,smp}.md. With --update-docs it also replaces the
# tables between the `<!-- matrix:NAME -->` and `<!-- /matrix:NAME -->` markers of doc/loaders.md
# and doc/testing.md, so the docs show what last ran and nothing else, and rewrites the command
# output the docs show from BUILD_DIR's kpack (scripts/render-samples.sh BUILD_DIR --update-docs).
# Fails when a table has no passing cell (the run did not include that suite) or a renderer fails.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$repo/tests/lib/matrix_results.sh"

[[ $# -ge 2 && $# -le 3 ]] || { echo "usage: $0 BUILD_DIR JUNIT.xml [--update-docs]" >&2; exit 2; }
build=$1 junit=$2 update=${3:-}
[[ $junit == /* ]] || junit=$(cd "$build" && pwd)/$junit   # absolute: the renderers take it as is
[[ -r $junit ]] || { echo "render-matrices: cannot read $junit" >&2; exit 1; }
out=$build/matrices
mkdir -p "$out"

if [[ -n ${KPACK_MATRIX_COMMIT:-} ]]; then
    commit=$(git -C "$repo" rev-parse --short "$KPACK_MATRIX_COMMIT")
else
    commit=$(git -C "$repo" rev-parse --short HEAD)
    [[ -z $(git -C "$repo" status --porcelain --untracked-files=no) ]] || commit+=" with local changes"
fi
stamp="Rendered by \`scripts/render-matrices.sh\` from the ctest run of commit $commit on $(date -u +%F)"
stamp+=" (\`scripts/test.sh\`, what CI runs): — marks a cell CI does not run; the full-matrix options run it."

smp_table() {
    store_results < <(results_from_junit "$junit")
    echo "| SMP test | result |"
    echo "|---|---|"
    local name
    for name in $(printf '%s\n' "${!status[@]}" | grep -E '^(smp|efi\.smp)\.' | sort); do
        echo "| \`$name\` | $(result_cell "$name") |"
    done
}

render() {   # NAME COMMAND...: the table with its stamp, refused without a passing cell
    local name=$1; shift
    { echo "$stamp"; echo; "$@"; } >"$out/$name.md"
    grep -q 'pass (' "$out/$name.md" || { echo "render-matrices: the $name table has no passing cell" >&2; exit 1; }
}
render loaders "$repo/tests/loaders/matrix-table.sh" "$build" "$junit"
render efi "$repo/tests/efi/matrix-table.sh" "$build" "$junit"
render smp smp_table

splice() {   # DOC NAME: the rendered table replaces what the doc's markers enclose
    local doc=$repo/$1 name=$2
    grep -q "<!-- matrix:$name -->" "$doc" || { echo "render-matrices: $1 has no matrix:$name marker" >&2; exit 1; }
    awk -v name="$name" -v table="$out/$name.md" '
        $0 == "<!-- matrix:" name " -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
        $0 == "<!-- /matrix:" name " -->" { skip = 0 }
        !skip { print }
    ' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
}
if [[ $update == --update-docs ]]; then
    splice doc/loaders.md loaders
    splice doc/testing.md efi
    splice doc/testing.md smp
    "$repo/scripts/render-samples.sh" "$build" --update-docs
fi
for name in loaders efi smp; do echo "render-matrices: $out/$name.md"; done
