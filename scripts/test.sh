#!/usr/bin/env bash
# test.sh [--full] — install dependencies, build kpack in build/, run every test (unit and boot),
# then the unit tests under ASan/UBSan (build-asan/) and each fuzzer for a minute (build-fuzz/).
# --full runs every full matrix (-DKPACK_FULL_MATRIX=ON: every loader, CPU count, codec and the
# Debian system's full sequences, kdump among them), many hours on 2 cores; CI runs without it.
# Boot tests alone: ctest --test-dir build -L boot; everything but them: -LE boot; installing, the
# kernel hook and the Debian package (tests/install): -L install.
set -euo pipefail

full=OFF
case ${1:-} in
    --full) full=ON ;;
    "") ;;
    *) echo "usage: $0 [--full]" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

scripts/install-deps.sh
scripts/check-format.sh                       # every C++ file as .clang-format writes it
scripts/check-includes.py --check-doc doc/layout.md   # includes as scripts/include-rules.txt allows them
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKPACK_FULL_MATRIX=$full
cmake --build build -j2
# One test per core: a boot test's QEMU runs a vCPU per host thread, so a multi-CPU guest claims
# PROCESSORS 2 and runs alone on this project's 2-core machines; everything else runs two at once.
# A skipped test is "Not Run" and leaves ctest's status at 0: tests/check-skips.sh lists the skips,
# and under CI fails on any that tests/allowed-skips.txt does not name.
ctest_status=0
ctest --test-dir build -j "$(nproc)" --output-on-failure --output-junit ctest-junit.xml || ctest_status=$?
tests/slowest-tests.py build/ctest-junit.xml 25 || true   # where CI's minutes went (doc/testing.md)
tests/check-skips.sh build/ctest-junit.xml
[[ $ctest_status -eq 0 ]] || exit "$ctest_status"
# The loader, EFI and SMP matrices of that run, headed by its commit, into build/matrices/ and the
# log; `scripts/render-matrices.sh build ctest-junit.xml --update-docs` puts them into doc/.
scripts/render-matrices.sh build ctest-junit.xml
cat build/matrices/loaders.md build/matrices/efi.md build/matrices/smp.md

# Hostile inputs: sanitizers catch what the unit tests only pass through; the fuzzers run ~60 s
# each (fuzz/README.md). Both use their own build directories.
scripts/test-sanitized.sh
fuzz/run.sh 60
