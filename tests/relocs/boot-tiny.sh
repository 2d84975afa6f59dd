#!/usr/bin/env bash
# boot-tiny.sh KPACK KERNEL_DIR_FILE WORKDIR INITRAMFS — pack the tinyconfig kernel of
# build-kernel.sh from its vmlinux (the relocation table computed from its .rela sections travels
# in the payload) and boot it under QEMU to the test /init (tests/boot/boot.sh). The kernel has no
# ACPI, so its power-off only halts: boot.sh ends QEMU once the marker shows.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK KERNEL_DIR_FILE WORKDIR INITRAMFS" >&2; exit 2; }
kpack=$1 dir=$(cat "$2") work=$3 initramfs=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"
"$kpack" --lz4 "$dir/vmlinux" -o "$work/tiny.bzImage"
"$kpack" info "$work/tiny.bzImage" | grep '^relocations:'
exec "$here/../boot/boot.sh" --stop-on-marker --log "$work/tiny.serial.log" "$work/tiny.bzImage" "$initramfs"
