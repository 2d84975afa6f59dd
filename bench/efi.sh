#!/usr/bin/env bash
# efi.sh OUT TAG... — the pre-kernel cost under UEFI: each image of each kernel TAG booted by OVMF's
# `-kernel` path (LoadImage/StartImage of the PE view, initrd through LoadFile2) on one CPU under
# -icount shift=0,sleep=off, so the guest TSC that tests/boot/init.c prints at /init counts guest
# instructions since reset: firmware, loader (OVMF reads the file from fw_cfg and copies its PE
# sections), stub or stock EFI stub, kernel. ICOUNT_RUNS (default 3) boots per image; prints the
# median per image and its difference from stock. Each byte of the file costs about 4.5 guest
# instructions before the stub runs: Debian's OVMF is a debug build that fills every buffer it frees
# with 0xAF, one `rep stosb` step per byte, and it frees buffers of the file's size several times.
#
# Expects OUT/TAG/IMAGE.img for IMAGE in KPACK_EFI_IMAGES (default "stock raw raw-compact lz4 zstd",
# raw-compact being `--raw --layout compact`, the layout for UEFI;
# bench/run.sh makes them) and OUT/initramfs.cpio.gz. Writes OUT/efi.tsv: TAG IMAGE RUN TSC, and
# the serial logs as OUT/TAG/IMAGE.efiN.log (kpack.debug on every command line, as bench/guest.sh:
# the stub's lines say when it started). KPACK_EFI_TIMEOUT: seconds per boot (default 900).
set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 OUT TAG..." >&2; exit 2; }
out=$1
shift
images=(${KPACK_EFI_IMAGES:-stock raw raw-compact lz4 zstd})
ovmf=${OVMF:-/usr/share/qemu/OVMF.fd}
lock=/tmp/kpack-qemu.lock
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/qemu.sh"
[[ -f $ovmf ]] || { echo "efi.sh: no OVMF at $ovmf (package ovmf)" >&2; exit 77; }

efi_boot() {  # TAG IMAGE RUN -> prints the TSC at /init
    local log=$out/$1/$2.efi$3.log
    qemu_machine "file:$log"
    flock "$lock" timeout -k 5 "${KPACK_EFI_TIMEOUT:-900}" "${qemu_cmd[@]}" -bios "$ovmf" -smp 1 "${qemu_icount[@]}" \
        -kernel "$out/$1/$2.img" -initrd "$out/initramfs.cpio.gz" -append "console=ttyS0 panic=-1 kpack.debug" \
        2>"$log.stderr" || true
    local tsc
    tsc=$(grep -a -o 'KPACK_INIT_OK tsc=[0-9]*' "$log" | head -n1 | cut -d= -f2)
    [[ -n $tsc ]] || { echo "efi.sh: $1/$2 did not reach /init; see $log" >&2; return 1; }
    echo "$tsc"
}

: > "$out/efi.tsv"
for tag in "$@"; do
    for ((run = 0; run < ${ICOUNT_RUNS:-3}; run++)); do
        for image in "${images[@]}"; do
            printf '%s\t%s\t%d\t%s\n' "$tag" "$image" "$run" "$(efi_boot "$tag" "$image" "$run")" >> "$out/efi.tsv"
        done
    done
done

python3 - "$out/efi.tsv" <<'EOF'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines()]
median = {}
for tag, image, _, tsc in rows:
    median.setdefault((tag, image), []).append(int(tsc))
median = {k: statistics.median(v) for k, v in median.items()}
for (tag, image), tsc in median.items():
    stock = median.get((tag, 'stock'))
    delta = f"{(tsc - stock) / 1e6:+.1f} M vs stock" if stock else ""
    print(f"efi {tag} {image}: /init at {tsc / 1e6:.1f} M instructions {delta}")
EOF
