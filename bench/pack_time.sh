#!/usr/bin/env bash
# pack_time.sh KPACK OUT RUNS TAG... — pack times (bench/run.sh measures the image sizes).
#
# Writes OUT/pack.tsv (TAG CODEC TOOL RUN SECONDS): `kpack --CODEC` against the codec's own CLI at
# the same settings on the same vmlinux (lz4 -12 --favor-decSpeed, gzip -9, zstd -19 -T0; kpack too
# uses the CPUs it may run on), with the relocation table bench/run.sh extracted
# (OUT/TAG/vmlinux.relocs), so that kpack does the work of the images it boots; the vmlinux, not
# the bzImage, so that both tools read the same bytes (nothing is lost: only the time is kept). Runs of the two tools alternate so that load from
# elsewhere hits both alike.
set -euo pipefail

[[ $# -ge 4 ]] || { echo "usage: $0 KPACK OUT RUNS TAG..." >&2; exit 2; }
kpack=$1 out=$2 runs=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

: > "$out/pack.tsv"
for tag in "$@"; do
    vmlinux=$out/$tag/vmlinux
    for codec in gzip lz4 zstd; do
        case $codec in
            gzip) cli=(sh -c 'gzip -9 -c "$0" > "$1"' "$vmlinux" "$tmp/cli.gz") ;;
            lz4) cli=(lz4 -q -12 --favor-decSpeed -f "$vmlinux" "$tmp/cli.lz4") ;;
            zstd) cli=(zstd -q -19 -T0 -f "$vmlinux" -o "$tmp/cli.zst") ;;
        esac
        for ((run = 0; run < runs; run++)); do
            s=$(timed "$kpack" -q "--$codec" "$vmlinux" --relocs "$vmlinux.relocs" -o "$tmp/kpack.img")
            printf '%s\t%s\tkpack\t%d\t%s\n' "$tag" "$codec" "$run" "$s" >> "$out/pack.tsv"
            s=$(timed "${cli[@]}")
            printf '%s\t%s\tcli\t%d\t%s\n' "$tag" "$codec" "$run" "$s" >> "$out/pack.tsv"
        done
        echo "pack: $tag $codec done" >&2
    done
done
