#!/usr/bin/env bash
# edd.sh KPACK IMAGE BUILD_DIR — ctest setup16.edd: does the kernel see the BIOS's EDD data (INT13
# AH=41/48/08 and the MBR signatures, which the setup collects) for the boot disk?
#
# Debian's generic 6.1 kernel (CONFIG_EDD=m; /init loads the edd.ko the setup16 initramfs carries)
# is booted with QEMU -kernel under SeaBIOS, the setup16 disk attached (64 MiB, MBR signature
# 0x4b41504b) and kpack.screen, first as the stock image, then as IMAGE (a kpack codec). The stock
# boot must show /sys/firmware/edd/int13_dev80 with that disk's size and signature; IMAGE's
# KPACK_EDD lines (every file of int13_dev80, raw_data in hex) must equal the stock ones.
# Exit: 0 pass, 1 fail, 77 skip (no QEMU).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 kind=$2 build=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
setup16_fixture "$build"

edd_lines() { grep -a '^KPACK_EDD' "$1" | tr -d '\r' || true; }
boot() {  # boot KIND: the KPACK_EDD lines of its log into $out/edd-KIND.txt
    local image status=0 log=$out/edd-$1.serial.log
    image=$(image_path "$kpack" "$1" "$generic")
    KPACK_APPEND="kpack.screen" "$boot_sh" --log "$log" "$image" "$generic_initrd" -vga std "${disk_args[@]}" || status=$?
    [[ $status -ne 77 ]] || exit 77
    [[ $status -eq 0 ]] || { echo "edd: FAIL: the $1 image did not boot to /init" >&2; exit 1; }
    edd_lines "$log" > "$out/edd-$1.txt"
    echo "---- $1: /sys/firmware/edd/int13_dev80 ----"
    cat "$out/edd-$1.txt"
}
boot stock
for want in "int13_dev80=present" "int13_dev80/sectors=131072" "int13_dev80/mbr_signature=0x4b41504b"; do
    grep -qxF "KPACK_EDD $want" "$out/edd-stock.txt" ||
        { echo "edd: FAIL: the stock image's kernel lacks KPACK_EDD $want (the fixture, not kpack, is wrong)" >&2; exit 1; }
done
boot "$kind"
if diff -u "$out/edd-stock.txt" "$out/edd-$kind.txt"; then
    echo "edd: PASS: $kind hands the kernel the same EDD data as the stock image"
    exit 0
fi
echo "edd: FAIL: $kind: /sys/firmware/edd/int13_dev80 differs from the stock image's (diff above)" >&2
exit 1
