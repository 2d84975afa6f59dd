#!/usr/bin/env bash
# bench/xz.sh [--runs N] [--out DIR] — what --xz costs and saves, on Debian's 6.1 generic kernel
# (whose stock image is xz: LZMA2 behind x86 BCJ, CRC32) and the 6.1 and 6.12 cloud kernels.
#   sizes   stock, kpack xz and kpack zstd images of the three kernels (OUT/xz-sizes.tsv)
#   guest   -icount boots of the generic kernel: PVH, stock and kpack xz (bench/guest.sh; N boots
#           each, median): the pre-kernel cost is an image's instructions to /init minus PVH's
#   pack    kpack --xz against xz with the same settings on the same vmlinux, N alternating runs
#           (OUT/xz-pack.tsv: IMAGE TOOL RUN SECONDS)
#   host    kpack_host_bench --codecs xz: the engine against plain liblzma (OUT/generic/host-xz.txt)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KPACK_BUILD:-$repo/build}
out=$build/bench-xz runs=3
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) sed -n '2,10p' "$0" >&2; exit 2 ;;
    esac
done
log() { echo "bench-xz: $*" >&2; }

cmake --build "$build" -j2 --target kpack kpack_host_bench >/dev/null
kpack=$build/packer/kpack
mkdir -p "$out"
"$repo/scripts/make-initramfs.sh" "$out/initramfs.cpio.gz"

: > "$out/xz-sizes.tsv"
for tag in generic 6.1 6.12; do
    case $tag in
        generic) vmlinuz=$("$repo/scripts/fetch-kernel.sh" "" amd64) ;;
        6.1) vmlinuz=$("$repo/scripts/fetch-kernel.sh") ;;
        *) vmlinuz=$("$repo/scripts/fetch-kernel.sh" "$tag") ;;
    esac
    dir=$out/$tag
    mkdir -p "$dir"
    "$kpack" extract "$vmlinuz" -o "$dir/vmlinux" --relocs "$dir/relocs"
    cp "$vmlinuz" "$dir/stock.img"
    ln -sf vmlinux "$dir/pvh.img"
    for codec in xz zstd; do
        "$kpack" "--$codec" "$dir/vmlinux" --relocs "$dir/relocs" -o "$dir/$codec.img"
    done
    for image in stock xz zstd; do
        printf '%s\t%s\t%s\n' "$tag" "$image" "$(stat -c %s "$dir/$image.img")" >> "$out/xz-sizes.tsv"
    done
    log "$tag: $(grep "^$tag" "$out/xz-sizes.tsv" | cut -f2,3 | tr '\t\n' '= ')"
done

ICOUNT_RUNS=$runs KPACK_BENCH_IMAGES="pvh stock xz" "$repo/bench/guest.sh" "$out" 0 generic

source "$repo/bench/timing.sh"
# The same filters and options kpack gives the kernel's code (packer/codecs_pack.cc), on the whole
# vmlinux in one stream, single-threaded as liblzma's stream encoder is (kpack spreads its frames
# over the cores).
vmlinux=$out/generic/vmlinux
: > "$out/xz-pack.tsv"
for ((run = 0; run < runs; run++)); do
    s=$(timed "$kpack" --xz "$vmlinux" --relocs "$out/generic/relocs" -o "$out/pack.img")
    printf 'generic\tkpack\t%d\t%s\n' "$run" "$s" >> "$out/xz-pack.tsv"
    s=$(timed sh -c 'xz --check=crc32 --x86 --lzma2=preset=9,lc=4,nice=273 -c "$0" > "$1"' "$vmlinux" "$out/cli.xz")
    printf 'generic\txz\t%d\t%s\n' "$run" "$s" >> "$out/xz-pack.tsv"
done
log "pack: $(awk '{t[$2] = t[$2] " " $4} END {for (k in t) printf "%s:%s  ", k, t[k]}' "$out/xz-pack.tsv")"

"$build/bench/kpack_host_bench" "$vmlinux" --codecs xz --runs "$runs" | tee "$out/generic/host-xz.txt"
log "icount (TSC at /init): $(awk '{print $2 "=" $4}' "$out/icount.tsv" | tr '\n' ' ')"
