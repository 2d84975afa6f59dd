#!/usr/bin/env bash
# cli-table.sh KPACK TABLE — kpack's command line against a table of rows (tests/bad_input/cli-table.txt
# says their format): for each, the exit status and the exact first line of the named stream, and for
# a failing run one line on stderr and its directory left as it was. Prints one line per row.
set -uo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 KPACK TABLE" >&2; exit 2; }
kpack=$(realpath "$1")
table=$(realpath "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d -t kpack-cli-table.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/run/outdir"
ln -s "$kpack" "$work/bin/kpack"
run=$work/run
python3 "$here/make_cases.py" "$run/cases" > /dev/null || exit 1
"$kpack" --lz4 --level 1 "$run/cases/good.elf" -o "$run/good.img" 2> /dev/null ||
    { echo "cli table: cannot pack cases/good.elf"; exit 1; }
cp "$run/cases/good.elf" "$run/-vmlinux"

passed=0 failed=0 number=0
while IFS= read -r row; do
    [[ -z $row || $row == \#* ]] && continue
    number=$((number + 1))
    command=${row%% => *}
    if [[ $command == "$row" || ! ${row#* => } =~ ^([0-9]+)\ (stdout|stderr):\ (.*)$ ]]; then
        echo "FAIL row $number: not 'COMMAND => STATUS STREAM: FIRST LINE': $row"
        failed=$((failed + 1))
        continue
    fi
    status=${BASH_REMATCH[1]} stream=${BASH_REMATCH[2]} expected=${BASH_REMATCH[3]}
    before=$(ls -A "$run")
    (cd "$run" && PATH="$work/bin:$PATH" bash -o pipefail -c "$command") > "$work/stdout" 2> "$work/stderr"
    got_status=$?
    after=$(ls -A "$run")
    got=$(head -n 1 "$work/$stream")
    [[ -s $work/$stream ]] || got="(nothing)"
    problems=()
    [[ $got_status -eq $status ]] || problems+=("exit status $got_status, not $status")
    [[ $got == "$expected" ]] || problems+=("first line of $stream: '$got'")
    if [[ $status -ne 0 ]]; then
        lines=$(wc -l < "$work/stderr")
        [[ $lines -eq 1 ]] || problems+=("$lines lines on stderr, not 1")
        [[ $before == "$after" ]] || problems+=("the directory changed")
    fi
    # Whatever a row wrote goes, so that the next one starts from the same directory.
    comm -13 <(echo "$before") <(echo "$after") | while IFS= read -r new; do rm -rf -- "${run:?}/$new"; done
    if [[ ${#problems[@]} -eq 0 ]]; then
        echo "ok   $command"
        passed=$((passed + 1))
    else
        echo "FAIL $command: $(IFS=';'; echo "${problems[*]}")"
        sed 's/^/       stderr: /' "$work/stderr" | head -n 5
        failed=$((failed + 1))
    fi
done < "$table"

echo "cli table: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
