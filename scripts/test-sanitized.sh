#!/usr/bin/env bash
# test-sanitized.sh — build the unit tests with ASan and UBSan in build-asan/ and run them.
# Any sanitizer report fails the run: -fno-sanitize-recover makes UBSan abort like ASan does.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKPACK_SANITIZE=ON
# Everything `ctest -L unit` runs: the unit tests and the fuzz targets' self-tests (fuzz/README.md).
cmake --build build-asan -j2 --target kpack_tests kpack_fuzz_self_tests
# detect_leaks: the tests own every allocation; halt_on_error: one report is enough to fail.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan -j "$(nproc)" -L unit --output-on-failure
