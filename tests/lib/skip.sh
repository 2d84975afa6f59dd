# skip.sh — sourced by the shell test scripts: a skip that CI refuses unless tests/allowed-skips.txt
# names it, so a missing tool or permission cannot turn into a silent pass.

kpack_allowed_skips=${KPACK_ALLOWED_SKIPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/allowed-skips.txt}

# CI sets CI=true (GitHub, GitLab, .ci/run); an empty or "false" CI is a developer's run.
kpack_under_ci() { [[ -n ${CI:-} && ${CI:-} != false ]]; }

# kpack_skip_allowed NAME [ALLOWLIST]: NAME is the first word of a line of the allowlist.
kpack_skip_allowed() {
    local list=${2:-$kpack_allowed_skips}
    [[ -r $list ]] && grep -qxF -- "$1" <<< "$(grep -v '^#' "$list" | awk '{print $1}')"
}

# kpack_skip_refused NAME REASON: prints the skip; status 0 when CI must count it as a failure.
kpack_skip_refused() {
    if kpack_under_ci && ! kpack_skip_allowed "$1"; then
        echo "FAIL $1: skipped under CI and not in tests/allowed-skips.txt ($2)"
        return 0
    fi
    echo "SKIP $1: $2"
    return 1
}
