#!/usr/bin/env bash
# boot-fault.sh KPACK BUILD_DIR — a CPU exception inside the stub must be reported on the serial
# console and halt, not triple-fault into a reset. The image's copy of read_boot_environment (found
# in the stub's symbol table) is overwritten with ud2, which raises #UD (vector 6) right after the
# stub installed its exception handlers.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 KPACK BUILD_DIR" >&2; exit 2; }
kpack=$1 build=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/damaged_image.sh"
damaged_image_setup "$build" fault

"$kpack" --lz4 --level 1 "$vmlinuz" -o "$image"
symbol=$(nm "$build/stub/stub-lz4.elf" | awk '/read_boot_environment/ && !found {print $1; found = 1}')  # no early exit: nm must not die of SIGPIPE under pipefail
[[ -n $symbol ]] || { echo "boot-fault: read_boot_environment not in stub-lz4.elf" >&2; exit 1; }
setup_sects=$(od -An -tu1 -j $((0x1F1)) -N1 "$image" | tr -d ' ')
offset=$(( (setup_sects + 1) * 512 + 0x$symbol ))
printf '\x0f\x0b' | dd of="$image" bs=1 seek="$offset" conv=notrunc status=none

"$here/../boot/boot.sh" --timeout 25 --log "$log" --expect-fail 'kpack: error: CPU exception in the stub .vector, rip. .0x6, ' \
    "$image" "$initrd"
require_no_kernel_start "the kernel started after a stub exception"
grep -a 'kpack:' "$log"
