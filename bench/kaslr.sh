#!/usr/bin/env bash
# bench/kaslr.sh [KERNEL_TAGS] — what KASLR costs in the guest, per codec and kernel (BENCHMARKS.md).
#
# Each image boots under QEMU/TCG with -icount shift=0,sleep=off, where the TSC counts guest
# instructions: the stub's own total (kpack.debug) and the TSC at /init, with KASLR (the default)
# and with nokaslr, median of 3 boots each. Prints a Markdown table. Defaults: 6.1 and 6.12 cloud.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kernels=${1:-"6.1 6.12"}
build=$repo/build
out=$repo/build/bench-kaslr
cmake -S "$repo" -B "$build" >/dev/null
cmake --build "$build" -j2 --target kpack >/dev/null
kpack=$build/packer/kpack
mkdir -p "$out"
"$repo/scripts/make-initramfs.sh" "$out/initramfs.cpio.gz" >/dev/null

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure IMAGE APPEND: "STUB INIT" medians in instructions.
measure() {
    local stub=() init=() log=$out/boot.log
    for _ in 1 2 3; do
        KPACK_APPEND="kpack.debug $2" "$repo/tests/boot/boot.sh" --log "$log" "$1" "$out/initramfs.cpio.gz" \
            -icount shift=0,sleep=off >/dev/null
        stub+=("$(grep -a -o 'total cycles=[0-9]*' "$log" | tail -n1 | cut -d= -f2)")
        init+=("$(grep -a -o 'KPACK_INIT_OK tsc=[0-9]*' "$log" | cut -d= -f2)")
    done
    echo "$(printf '%s\n' "${stub[@]}" | median) $(printf '%s\n' "${init[@]}" | median)"
}

echo "| kernel | codec | stub, nokaslr (M instr) | stub, KASLR (M instr) | KASLR adds | of the stub's cost | /init, nokaslr (M) | /init, KASLR (M) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for tag in $kernels; do
    glob=; [[ $tag == 6.1 ]] || glob=$tag
    vmlinuz=$("$repo/scripts/fetch-kernel.sh" $glob 2>/dev/null)
    for codec in raw gzip lz4 zstd; do
        image=$out/$tag-$codec.img
        "$kpack" "--$codec" "$vmlinuz" -o "$image"
        read -r stub_off init_off < <(measure "$image" nokaslr)
        read -r stub_on init_on < <(measure "$image" "")
        awk -v t="$tag" -v c="$codec" -v a="$stub_off" -v b="$stub_on" -v i="$init_off" -v j="$init_on" 'BEGIN {
            printf "| %s | %s | %.2f | %.2f | %+.2f M | %+.1f %% | %.1f | %.1f |\n", t, c, a / 1e6, b / 1e6,
                   (b - a) / 1e6, (a > 1e6 ? 100 * (b - a) / a : 0), i / 1e6, j / 1e6 }'
    done
done
