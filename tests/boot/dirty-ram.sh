#!/usr/bin/env bash
# dirty-ram.sh KPACK_BINARY BUILD_DIR IMAGE — boot with every byte of guest RAM 0xcc beforehand.
#
# QEMU's fresh RAM is zeros, so a stub that forgets to zero what the kernel expects zeroed still
# boots there. A machine that ran before (kexec, a warm reset) leaves its old bytes. Here guest RAM
# is a private mapping of a file of 0xcc bytes, and the image must still reach /init. IMAGE is stock
# (the control) or a codec. What the stub leaves alone, the kernel's .bss and .brk, the kernel clears
# itself (doc/image-format.md). A stub that skipped a tail the packer trimmed (e.g. a record claiming
# the kernel's whole span) panics here and boots on zeroed RAM.
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK_BINARY BUILD_DIR IMAGE" >&2; exit 2; }
kpack=$1 dir=$2/boot kind=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir"

image=$vmlinuz
[[ $kind == stock ]] || image=$(packed_image "$kpack" "$kind" "$vmlinuz" "$dir/dirty-ram")
ram=$dir/dirty-ram/ram-256M.bin
mkdir -p "$dir/dirty-ram"
(
    flock 9
    [[ -s $ram ]] || { head -c 256M /dev/zero | tr '\0' '\314' > "$ram.tmp" && mv "$ram.tmp" "$ram"; }
) 9> "$ram.lock"
[[ $kind == stock ]] || export KPACK_EXPECT_RUN_REPORT=1
"$here/boot.sh" --log "$dir/dirty-ram-$kind.serial.log" "$image" "$initrd" -m 256M \
    -object "memory-backend-file,id=dirty,size=256M,mem-path=$ram,share=off" -machine memory-backend=dirty
echo "dirty-ram: PASS: $kind reached /init from RAM that held 0xcc"
