#!/usr/bin/env bash
# bench/run.sh [--runs N] [--pack-runs N] [--host-runs N] [--kernels "6.1 6.12"] [--out DIR]
#              [--skip-guest] [--skip-host] [--skip-pack]
#
# The whole benchmark: builds kpack, fetches the Debian cloud kernels (6.1: stock lz4, 6.12: stock
# zstd), extracts each vmlinux with `kpack extract`, packs it raw/gzip/lz4/zstd, then
#   guest  boots stock, PVH and every kpack image under QEMU/TCG (bench/guest.sh): -icount TSC at
#          /init, and wall time to /init as the median of N interleaved rounds (default 10); then
#          stock, raw, lz4 and zstd under OVMF's -kernel path (bench/efi.sh), -icount TSC at /init;
#          then lz4 and zstd on -smp 2 with every CPU vs kpack.cpus=1, under SeaBIOS and OVMF
#          (bench/smp.sh), decode cycles as the median of N interleaved rounds
#   host   kpack_host_bench on each vmlinux: engine vs library decode vs stock-shaped pipeline, and
#          what verifying lz4/zstd frames costs (its second table: engine/library, target <= 1.05)
#   pack   image sizes, and pack time of `kpack --X` vs the codec's own CLI (bench/pack_time.sh)
# and writes OUT/report.md and OUT/prekernel.svg (bench/report.py). A quick run: --runs 3
# --pack-runs 1 --host-runs 3 --kernels 6.1.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KPACK_BUILD:-$repo/build}
out=$build/bench-results
runs=10 pack_runs=3 host_runs=15
kernels="6.1 6.12"
skip_guest= skip_host= skip_pack=
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --pack-runs) pack_runs=$2; shift 2 ;;
        --host-runs) host_runs=$2; shift 2 ;;
        --kernels) kernels=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --skip-guest) skip_guest=1; shift ;;
        --skip-host) skip_host=1; shift ;;
        --skip-pack) skip_pack=1; shift ;;
        *) sed -n '2,13p' "$0" >&2; exit 2 ;;
    esac
done
log() { echo "bench: $*" >&2; }

cmake -S "$repo" -B "$build" >/dev/null
cmake --build "$build" -j2 --target kpack kpack_host_bench >/dev/null
kpack=$build/packer/kpack
mkdir -p "$out"
"$repo/scripts/make-initramfs.sh" "$out/initramfs.cpio.gz"

# The machine, for the report.
{
    lscpu | sed -n 's/^Model name: *//p' | head -n1
    nproc
    qemu-system-x86_64 --version | head -n1
    uname -r
} > "$out/machine.txt"

for tag in $kernels; do
    glob=; [[ $tag == 6.1 ]] || glob=$tag
    vmlinuz=$("$repo/scripts/fetch-kernel.sh" $glob)
    dir=$out/$tag
    mkdir -p "$dir"
    log "$tag: $vmlinuz"
    # The relocation table too, so the kpack images move the kernel's virtual base as the stock
    # image does (KASLR), at the same cost.
    "$kpack" extract "$vmlinuz" -o "$dir/vmlinux" --relocs "$dir/vmlinux.relocs"
    cp "$vmlinuz" "$dir/stock.img"
    ln -sf vmlinux "$dir/pvh.img"
    for codec in raw gzip lz4 zstd; do
        "$kpack" "--$codec" "$dir/vmlinux" --relocs "$dir/vmlinux.relocs" -o "$dir/$codec.img"
    done
done

[[ -n $skip_guest ]] || "$repo/bench/guest.sh" "$out" "$runs" $kernels
[[ -n $skip_guest ]] || "$repo/bench/efi.sh" "$out" $kernels  # the same under OVMF -kernel: efi.tsv
# Every CPU against kpack.cpus=1 on -smp 2, multi-threaded TCG: SeaBIOS (smp.tsv), OVMF (smp-ovmf.tsv).
[[ -n $skip_guest ]] || "$repo/bench/smp.sh" "$out" "$runs" $kernels
[[ -n $skip_guest ]] || KPACK_SMP_FIRMWARE=ovmf "$repo/bench/smp.sh" "$out" "$runs" $kernels

if [[ -z $skip_host ]]; then
    for tag in $kernels; do
        log "$tag: host benchmark"
        "$build/bench/kpack_host_bench" "$out/$tag/vmlinux" --runs "$host_runs" > "$out/$tag/host.txt"
        cat "$out/$tag/host.txt" >&2
    done
fi

[[ -n $skip_pack ]] || "$repo/bench/pack_time.sh" "$kpack" "$out" "$pack_runs" $kernels

python3 "$repo/bench/report.py" "$out" $kernels
log "report: $out/report.md, chart: $out/prekernel.svg"
