# Sourced by the matrix-table.sh scripts (tests/loaders, tests/efi): test results read from a
# ctest run, and one Markdown table cell per test.
#
# load_results_from_lasttest LOG / load_results_from_junit FILE fill `status` (test name ->
# "STATUS SECONDS", STATUS one of pass fail skip); result_cell NAME prints "pass (N s)",
# "**FAIL**", "skip" (tool or firmware missing here) or "—" (not registered or not run).

declare -A status

# Testing/Temporary/LastTest.log of the last ctest run.
results_from_lasttest() {
    awk '
        /^[0-9]+\/[0-9]+ Testing: / { name = $3 }
        /^Test time = /             { time = $4 }
        /^Test Passed\./            { print name, "pass", time }
        /^Test Failed\./            { print name, "fail", time }
        /^Test Skipped/             { print name, "skip", time }
        /^Test Not Run/             { print name, "skip", time }
    ' "$1"
}

# What `ctest --output-junit FILE` wrote: one <testcase> element per test, self-closing when it
# passed; a <failure> or <skipped> child inside it says otherwise.
results_from_junit() {
    awk '
        function attr(s, key,   m) {
            if (match(s, key "=\"[^\"]*\"")) { m = substr(s, RSTART, RLENGTH); sub(/^[^"]*"/, "", m); sub(/"$/, "", m); return m }
            return ""
        }
        /<testcase / {
            name = attr($0, "name"); time = attr($0, "time"); status = "pass"
            if ($0 ~ /status="(notrun|disabled)"/) status = "skip"
            if ($0 ~ /\/>[[:space:]]*$/) { print name, status, time; name = ""; next }
        }
        name != "" && /<failure/  { status = "fail" }
        name != "" && /<skipped/  { status = "skip" }
        name != "" && /<\/testcase>/ { print name, status, time; name = "" }
    ' "$1"
}

# "NAME STATUS SECONDS" lines on stdin into `status`.
store_results() {
    local name st secs
    while read -r name st secs; do
        [[ -n $name ]] && status[$name]="$st $secs"
    done
}

result_cell() {
    local r=${status[$1]:-}
    case ${r%% *} in
        pass) printf 'pass (%.0f s)' "${r#* }" ;;
        fail) printf '**FAIL**' ;;
        skip) printf 'skip' ;;
        *)    printf '—' ;;
    esac
}

# load_results SUITE BUILD_DIR [JUNIT]: `status` from JUNIT (relative paths are taken from
# BUILD_DIR, as ctest does) or else from BUILD_DIR's last ctest log; exits naming what is missing.
load_results() {
    local suite=$1 build=$2 junit=${3:-}
    [[ -z $junit || $junit == /* ]] || junit=$build/$junit
    if [[ -n $junit ]]; then
        [[ -r $junit ]] || { echo "matrix-table: cannot read $junit" >&2; exit 1; }
        store_results < <(results_from_junit "$junit")
    else
        local log=$build/Testing/Temporary/LastTest.log
        [[ -r $log ]] || { echo "matrix-table: no $log; run ctest -L $suite in $build first" >&2; exit 1; }
        store_results < <(results_from_lasttest "$log")
    fi
}
