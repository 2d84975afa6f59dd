#!/usr/bin/env bash
# check-skips-selftest.sh — proves that a skipped boot test cannot pass CI: a one-test ctest tree
# runs tests/boot/boot.sh with QEMU pointing nowhere (it skips, status 77), and tests/check-skips.sh
# must then fail under CI=true naming that test, and only report it outside CI.
set -euo pipefail

tests=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d -t kpack-skips.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-skips-selftest: FAIL: $*" >&2; exit 1; }

cat > "$work/CTestTestfile.cmake" <<CTEST
add_test(boot.without-qemu "$tests/boot/boot.sh" /dev/null /dev/null)
set_tests_properties(boot.without-qemu PROPERTIES SKIP_RETURN_CODE 77
    ENVIRONMENT "QEMU=$work/no-qemu-system-x86_64")
CTEST
# The skip alone leaves ctest's own status at 0: that is what the checker is for.
ctest --test-dir "$work" --output-junit "$work/junit.xml" > "$work/ctest.txt" || fail "ctest: $(cat "$work/ctest.txt")"
grep -q 'boot.without-qemu .*Not Run\|boot.without-qemu .*Skipped' "$work/ctest.txt" || fail "the test was not skipped"

status=0
CI=true "$tests/check-skips.sh" "$work/junit.xml" > "$work/ci.txt" || status=$?
cat "$work/ci.txt"
[[ $status -eq 1 ]] || fail "under CI=true the checker exited $status, not 1"
grep -qx 'FAIL: skipped under CI and not in allowed-skips.txt: boot.without-qemu' "$work/ci.txt" || fail "no line names the skip"

CI= "$tests/check-skips.sh" "$work/junit.xml" > "$work/local.txt" || fail "outside CI a skip must not fail"
grep -qx '1 skipped: boot.without-qemu' "$work/local.txt" || fail "outside CI the skip is not reported"

# A test the allowlist names passes CI.
echo "boot.without-qemu  this self-test's own skip" > "$work/allowed.txt"
CI=true "$tests/check-skips.sh" "$work/junit.xml" "$work/allowed.txt" > /dev/null || fail "an allowed skip failed CI"
echo "check-skips-selftest: PASS"
