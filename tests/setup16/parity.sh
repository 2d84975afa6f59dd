#!/usr/bin/env bash
# parity.sh KPACK BP_DIFF LOADER IMAGE BUILD_DIR — ctest setup16.parity.LOADER[.stock]: does a kpack
# image hand the kernel the same boot_params as the stock image, under the same loader?
#
# Boots the stock Debian 6.1 cloud image and then IMAGE (a kpack codec, or `stock` again: the
# tool's plumbing, which must find no difference at all) through LOADER (seabios, qboot,
# grub-linux16, isolinux: tests/loaders/loader-boot.sh) on the same machine: std VGA, the setup16
# disk as BIOS drive 0x80 (ISO loaders still boot from their CD: -boot d), `kpack.bootparams` on
# the command line so /init dumps /sys/kernel/boot_params/data. Then boot_params_diff compares the
# two pages field by field, allowing only what parity-allow.txt lists (with its reasons), and the
# whole diff is printed either way.
# Exit: 0 pass, 1 a boot failed or a field outside the allowlist differs, 77 skip (tool missing).
set -euo pipefail

[[ $# -eq 5 ]] || { echo "usage: $0 KPACK BP_DIFF LOADER IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 bpdiff=$2 loader=$3 kind=$4 build=$5
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
setup16_fixture "$build"

machine=(-vga std "${disk_args[@]}")
case $loader in
    grub-linux16|isolinux) machine+=(-boot d) ;;
esac

# loader-boot.sh names its log LOADER-IMAGE$KPACK_LOADER_TAG.serial.log under boot/loaders.
boot() {  # boot KIND A|B
    local status=0
    KPACK_LOADER_TAG=.parity-$kind-$2 KPACK_APPEND="kpack.bootparams kpack.screen" \
        "$loader_boot" "$kpack" "$loader" "$1" "$build" "${machine[@]}" || status=$?
    if [[ $status -eq 77 ]]; then exit 77; fi
    [[ $status -eq 0 ]] || { echo "parity: FAIL: the $1 image did not boot through $loader" >&2; exit 1; }
}
boot stock A
boot "$kind" B
log_a=$boot_dir/loaders/$loader-stock.parity-$kind-A.serial.log
log_b=$boot_dir/loaders/$loader-$kind.parity-$kind-B.serial.log

source "$setup16_here/../lib/parity_verdict.sh"
status=0
# stock against itself: the plumbing, which must find no difference at all
parity_verdict "$bpdiff" "$log_a" "$log_b" "$setup16_here/parity-allow.txt" "$loader" "$kind" \
    "$([[ $kind == stock ]] && echo no-allowlist)" || status=$?
exit $status
