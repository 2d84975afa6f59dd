#!/usr/bin/env bash
# boot-tiny.sh KPACK KERNEL_DIR_FILE WORKDIR INITRAMFS — pack the tinyconfig kernel of
# build-kernel.sh from its vmlinux (the relocation table computed from its .rela sections travels
# in the payload) and boot it under QEMU to the test /init (tests/boot/boot.sh), with kpack.debug:
# the stub's summary line must show the virtual base moved with every entry of that table applied,
# so the boot proves the computed table right, not just present. The draw of the virtual offset
# can be 0 (1 in ~500): then the boot is repeated, up to 3 times. The kernel has no ACPI, so its
# power-off only halts: boot.sh ends QEMU once the marker shows.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK KERNEL_DIR_FILE WORKDIR INITRAMFS" >&2; exit 2; }
kpack=$1 dir=$(cat "$2") work=$3 initramfs=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"
image=$work/tiny.bzImage log=$work/tiny.serial.log

"$kpack" --lz4 "$dir/vmlinux" -o "$image"
line=$("$kpack" info "$image" | grep '^relocations:')
echo "$line"
# The table's entries, all lists together: the stub applies each one once.
entries=$(grep -oE '(64-bit|inverse-32|32-bit) [0-9]+' <<< "$line" | awk '{ s += $2 } END { print s + 0 }')
[[ $entries -gt 0 ]] || { echo "FAIL: kpack info shows no relocation entries: $line" >&2; exit 1; }

for attempt in 1 2 3; do
    status=0
    KPACK_APPEND=kpack.debug "$here/../boot/boot.sh" --stop-on-marker --log "$log" "$image" "$initramfs" || status=$?
    [[ $status -eq 0 ]] || exit "$status"   # 77 (no QEMU) included
    summary=$(grep -a -m1 'virtual base' "$log" || true)
    echo "stub: $summary"
    if [[ $summary =~ \(offset\ 0x0\  ]]; then
        echo "attempt $attempt drew virtual offset 0; booting again"
        continue
    fi
    [[ $summary =~ \ $entries\ relocations\) ]] \
        || { echo "FAIL: the stub did not apply the $entries entries of the computed table" >&2; exit 1; }
    echo "PASS: booted to /init with the virtual base moved and all $entries relocations applied"
    exit 0
done
echo "FAIL: virtual offset 0 three times in a row" >&2
exit 1
