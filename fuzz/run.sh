#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] — build the fuzzers (clang, libFuzzer, ASan, UBSan) in build-fuzz/ and run
# each for SECONDS (default 60), as many at once as there are cores (what CI does).
# fuzz/run.sh --long [SECONDS] — the long campaign: every target at once, each for SECONDS
# (default 3600), sharing the machine's cores; fuzz/README.md has the figures of one such hour.
#
# Fails on the first crash, leak, timeout or out-of-memory, leaving the input that caused it in
# build-fuzz/artifacts/. Prints each target's exec/s and total executions.
#
# The committed seeds (fuzz/corpus/<target>) are read, never written: what a run discovers goes to
# build-fuzz/corpus/<target>, which later runs start from as well.
set -euo pipefail

long=false
if [[ ${1:-} == --long ]]; then
    long=true
    shift
fi
seconds=${1:-$($long && echo 3600 || echo 60)}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
build=build-fuzz
targets=(fuzz_elf fuzz_bzimage fuzz_kpack_elf fuzz_unpack fuzz_boot_env fuzz_pack fuzz_stub_inputs fuzz_efi_variables)

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKPACK_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
# Only the fuzz targets: the rest of the tree (the freestanding stub) is built with gcc elsewhere.
cmake --build "$build" -j2 --target "${targets[@]}"

mkdir -p "$build/artifacts"
# run_target T: one libFuzzer run of T for $seconds, its log in build-fuzz/artifacts/T.log.
run_target() {
    local t=$1
    mkdir -p "$build/corpus/$t"
    # -timeout: one input running 10 s is a hang; -rss_limit_mb: 2 GiB is an out-of-memory bug.
    "$build/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "fuzz/corpus/$t" >"$build/artifacts/$t.log" 2>&1
}

declare -A status
# Waves of at most `per_wave` targets at once: the long campaign runs them all together, sharing the
# cores; a CI run one per core, so each still gets a whole core for $seconds. Stops after a wave
# with a failure.
per_wave=$($long && echo "${#targets[@]}" || nproc)
for ((i = 0; i < ${#targets[@]}; i += per_wave)); do
    wave=("${targets[@]:i:per_wave}")
    echo "fuzz/run.sh: ${wave[*]} at once, ${seconds}s each" >&2
    declare -A pids
    for t in "${wave[@]}"; do
        run_target "$t" &
        pids[$t]=$!
    done
    failed=0
    for t in "${wave[@]}"; do
        status[$t]=0
        wait "${pids[$t]}" || status[$t]=$?
        [[ ${status[$t]} -eq 0 ]] || failed=1
    done
    [[ $failed -eq 0 ]] || break
done

summary=()
for t in "${targets[@]}"; do
    log=$build/artifacts/$t.log
    if [[ ${status[$t]:-0} -ne 0 ]]; then
        tail -n 40 "$log" >&2
        echo "fuzz/run.sh: $t FAILED (exit ${status[$t]}); reproduce with: $build/fuzz/$t $build/artifacts/$t-<crash file>" >&2
        exit 1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    summary+=("$(printf '%-14s %8s exec/s %10s execs' "$t" "${rate:-?}" "${execs:-?}")")
done
echo "fuzz/run.sh: no crashes in ${seconds}s per target:"
printf '  %s\n' "${summary[@]}"
