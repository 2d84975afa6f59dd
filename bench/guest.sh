#!/usr/bin/env bash
# guest.sh OUT RUNS TAG... — boot every image of each kernel TAG and record when /init started.
# ICOUNT_RUNS (default 3) -icount boots per image; the report takes their median. Under -icount the
# RTC runs on the guest's clock from a fixed date (-rtc clock=vm): with the host's, the kernel's
# reads of it made the same boot vary by about 1 M instructions.
# KPACK_BENCH_QEMU_ARGS adds QEMU options to every boot (e.g. "-cpu max": AVX2 for XXH3), and
# KPACK_BENCH_NAME (default icount) names that series' files, so that series of the same images
# under other options (bench/run.sh's -cpu max, bench/setup.sh) keep their own;
# KPACK_BENCH_APPEND adds words to the -icount boots' kernel command line (bench/kaslr.sh: nokaslr).
# KPACK_BENCH_PHASE=1 adds one more, `bench.phase=x...`, 9 x's longer on each run: a parameter of no
# module, which the kernel and the stub ignore, but which shifts everything after it by a few
# hundred instructions against the guest's timer. Under -icount one boot repeats exactly, yet two
# images whose boots differ by a hundred instructions before the kernel land at different phases
# of its tick, and its tick-waiting loops then spin for counts up to 2 M apart; the runs of such a
# series are those phases, and their median is the figure (bench/kaslr.sh).
#
# Expects OUT/TAG/{stock,pvh,raw,gzip,lz4,zstd}.img (bench/run.sh makes them; KPACK_BENCH_IMAGES,
# space-separated, names other images, as bench/xz.sh does) and OUT/initramfs.cpio.gz. Writes:
#   OUT/NAME.tsv       TAG IMAGE RUN TSC  under -icount shift=0,sleep=off: TSC = guest instructions
#   OUT/TAG/IMAGE.NAMEN.log              the serial log, with the stub's `kpack:` phase lines
#   OUT/wall.tsv       TAG IMAGE ROUND SECONDS   without -icount: QEMU start to the /init marker
# RUNS wall-time rounds (0 skips them); every round boots every image once, in a rotated order, so
# a burst of load from elsewhere lands on all images rather than on one.
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: $0 OUT RUNS TAG..." >&2; exit 2; }
out=$1 runs=$2
shift 2
tags=("$@")
images=(${KPACK_BENCH_IMAGES:-pvh stock raw gzip lz4 zstd})
initrd=$out/initramfs.cpio.gz
name=${KPACK_BENCH_NAME:-icount}
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/qemu.sh"

# The tests' machine (tests/lib/qemu.sh), serial at SERIAL, booting IMAGE: sets qemu_cmd.
bench_machine() {  # SERIAL IMAGE
    qemu_machine "$1"
    qemu_cmd+=(-kernel "$2" -initrd "$initrd" ${KPACK_BENCH_QEMU_ARGS:-})
}
append="console=ttyS0 panic=-1 kpack.debug ${KPACK_BENCH_APPEND:-}"

# One QEMU at a time on this machine, also across engineers' scripts that honour the lock.
lock=/tmp/kpack-qemu.lock

# The word KPACK_BENCH_PHASE adds on run RUN, with its leading space; nothing without it.
phase_word() {
    [[ -n ${KPACK_BENCH_PHASE:-} ]] || return 0
    printf ' bench.phase=%s' "$(head -c $(($1 * 9 + 1)) /dev/zero | tr '\0' x)"
}

icount_boot() {  # TAG IMAGE RUN -> prints the TSC at /init
    local tag=$1 image=$2 log=$out/$1/$2.$name$3.log
    bench_machine "file:$log" "$out/$tag/$image.img"
    flock "$lock" timeout -k 5 300 "${qemu_cmd[@]}" -append "$append$(phase_word "$3")" "${qemu_icount[@]}" \
        2>"$log.stderr" || true
    local tsc
    tsc=$(grep -a -o 'KPACK_INIT_OK tsc=[0-9]*' "$log" | head -n1 | cut -d= -f2)
    [[ -n $tsc ]] || { echo "guest.sh: $tag/$image did not reach /init; see $log" >&2; return 1; }
    echo "$tsc"
}

wall_boot() {  # TAG IMAGE -> prints seconds from QEMU start to the marker line on the serial port
    local tag=$1 image=$2 start end= line
    bench_machine stdio "$out/$tag/$image.img"
    exec 8>"$lock"
    flock 8
    start=${EPOCHREALTIME/./}
    while IFS= read -r line; do
        [[ -z $end && $line == *KPACK_INIT_OK* ]] && end=${EPOCHREALTIME/./}
    done < <(timeout -k 5 300 "${qemu_cmd[@]}" -append "console=ttyS0 panic=-1" 2>/dev/null)
    exec 8>&-
    [[ -n $end ]] || { echo "guest.sh: $tag/$image did not reach /init (wall run)" >&2; return 1; }
    printf '%d.%06d\n' $(((end - start) / 1000000)) $(((end - start) % 1000000))
}

: > "$out/$name.tsv"
for ((run = 0; run < ${ICOUNT_RUNS:-3}; run++)); do
    for tag in "${tags[@]}"; do
        for image in "${images[@]}"; do
            tsc=$(icount_boot "$tag" "$image" "$run")
            printf '%s\t%s\t%d\t%s\n' "$tag" "$image" "$run" "$tsc" >> "$out/$name.tsv"
            echo "guest: $tag $image $name tsc=$tsc" >&2
        done
    done
done

((runs > 0)) || exit 0
: > "$out/wall.tsv"
n=${#images[@]}
for ((round = 0; round < runs; round++)); do
    for tag in "${tags[@]}"; do
        for ((i = 0; i < n; i++)); do
            image=${images[(i + round) % n]}
            s=$(wall_boot "$tag" "$image")
            printf '%s\t%s\t%d\t%s\n' "$tag" "$image" "$round" "$s" >> "$out/wall.tsv"
        done
    done
    echo "guest: wall round $((round + 1))/$runs done" >&2
done
