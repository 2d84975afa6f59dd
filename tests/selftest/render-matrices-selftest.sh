#!/usr/bin/env bash
# render-matrices-selftest.sh — scripts/test.sh renders the matrices from the JUnit file ctest
# writes, named relative to the build directory. A one-directory ctest tree with one passing test
# per table must render each table with that cell passing, from a relative and an absolute name.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d -t kpack-matrices.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "render-matrices-selftest: FAIL: $*" >&2; exit 1; }

for name in boot.kpack.lz4 efi.kernel.lz4 smp.seabios.1; do
    echo "add_test($name true)"
done > "$work/CTestTestfile.cmake"
ctest --test-dir "$work" --output-junit junit.xml > "$work/ctest.txt" || fail "ctest: $(cat "$work/ctest.txt")"

for junit in junit.xml "$work/junit.xml"; do
    rm -rf "$work/matrices"
    # The build directory by a relative name, as scripts/test.sh gives it.
    (cd "$(dirname "$work")" && "$repo/scripts/render-matrices.sh" "$(basename "$work")" "$junit") > "$work/render.txt" 2>&1 \
        || fail "render-matrices with $junit: $(cat "$work/render.txt")"
    grep -q '^| QEMU -kernel, SeaBIOS .* pass (' "$work/matrices/loaders.md" || fail "$junit: no boot.kpack.lz4 cell"
    grep -q 'pass (' "$work/matrices/efi.md" || fail "$junit: no efi.kernel.lz4 cell"
    grep -qx '| `smp.seabios.1` | pass (0 s) |' "$work/matrices/smp.md" || fail "$junit: no smp.seabios.1 row"
done
echo "render-matrices-selftest: PASS"
