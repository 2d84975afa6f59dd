#!/usr/bin/env bash
# check-format.sh — every C++ file of the repository is as clang-format (.clang-format) writes it.
# With --fix, rewrites them in place instead. Exit: 0 clean, 1 a file differs (each one named).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mapfile -t files < <(git ls-files '*.cc' '*.h' ':!fuzz/corpus')
if [[ ${1:-} == --fix ]]; then
    clang-format -i "${files[@]}"
    exit 0
fi
if ! report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
    grep -o '^[^:]*\.\(cc\|h\):' <<<"$report" | sort -u | sed 's/:$/: not formatted (scripts\/check-format.sh --fix)/' >&2
    exit 1
fi
echo "check-format: ${#files[@]} C++ files formatted"
