#!/usr/bin/env bash
# xz.sh KPACK OUT RUNS [PACK_RUNS] — what --xz costs and saves on Debian's 6.1 generic kernel, whose stock image
# is xz (LZMA2 behind x86 BCJ, CRC32). The cloud kernels' xz images are in bench/run.sh's sizes and
# -icount tables. Expects OUT/initramfs.cpio.gz; writes under OUT/generic/ and:
#   OUT/xz-sizes.tsv  TAG IMAGE BYTES: the stock, kpack xz and kpack zstd images
#   OUT/xz.tsv        TAG IMAGE RUN TSC: -icount boots of PVH, stock and kpack xz (bench/guest.sh,
#                     RUNS each; the pre-kernel cost is an image's TSC at /init minus PVH's)
#   OUT/xz-pack.tsv   TAG TOOL RUN SECONDS: kpack --xz against xz with the same filters and
#                     settings on the same vmlinux, PACK_RUNS (default RUNS) alternating runs
#   OUT/generic/host-xz.txt  kpack_host_bench --codecs xz: the engine against plain liblzma
set -euo pipefail

[[ $# -eq 3 || $# -eq 4 ]] || { echo "usage: $0 KPACK OUT RUNS [PACK_RUNS]" >&2; exit 2; }
kpack=$1 out=$2 runs=$3 pack_runs=${4:-$3}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
host_bench=$(dirname "$kpack")/../bench/kpack_host_bench
dir=$out/generic
mkdir -p "$dir"

vmlinuz=$("$repo/scripts/fetch-kernel.sh" "" amd64)
basename "$vmlinuz" > "$dir/kernel.txt"
"$kpack" extract "$vmlinuz" -o "$dir/vmlinux" --relocs "$dir/relocs"
cp "$vmlinuz" "$dir/stock.img"
ln -sf vmlinux "$dir/pvh.img"
: > "$out/xz-sizes.tsv"
# The booted images from the stock bzImage (its header's 5-level flag, its relocation table); the
# vmlinux is for PVH and for the pack-time comparison below, where both tools read the same bytes.
for image in stock xz zstd; do
    [[ $image == stock ]] || "$kpack" -q "--$image" "$vmlinuz" -o "$dir/$image.img"
    printf 'generic\t%s\t%s\n' "$image" "$(stat -c %s "$dir/$image.img")" >> "$out/xz-sizes.tsv"
done

ICOUNT_RUNS=$runs KPACK_BENCH_IMAGES="pvh stock xz" KPACK_BENCH_NAME=xz "$repo/bench/guest.sh" "$out" 0 generic

source "$repo/bench/timing.sh"
# The same filters and options kpack gives the kernel's code (packer/codecs/codecs_pack.cc), on the whole
# vmlinux in one stream, single-threaded as liblzma's stream encoder is (kpack spreads its frames
# over the cores).
: > "$out/xz-pack.tsv"
for ((run = 0; run < pack_runs; run++)); do
    s=$(timed "$kpack" -q --xz "$dir/vmlinux" --relocs "$dir/relocs" -o "$dir/pack.img")
    printf 'generic\tkpack\t%d\t%s\n' "$run" "$s" >> "$out/xz-pack.tsv"
    s=$(timed sh -c 'xz --check=crc32 --x86 --lzma2=preset=9,lc=4,nice=273 -c "$0" > "$1"' "$dir/vmlinux" "$dir/cli.xz")
    printf 'generic\txz\t%d\t%s\n' "$run" "$s" >> "$out/xz-pack.tsv"
done
rm -f "$dir/pack.img" "$dir/cli.xz"

"$host_bench" "$dir/vmlinux" --codecs xz --runs "$runs" > "$dir/host-xz.txt"
