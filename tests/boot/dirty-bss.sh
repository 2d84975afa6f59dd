#!/usr/bin/env bash
# dirty-bss.sh KPACK_BINARY BUILD_DIR CODEC — the kernel clears its own .bss and .brk.
#
# The stub leaves them as it finds them (PackerRecord::bss_page, doc/image-format.md), where QEMU's
# fresh RAM is zeros anyway. kpack.test_dirty_bss fills them with 0xcc once the kernel is in place,
# as a machine that ran before (kexec, a warm reset) may leave them: the boot must still reach
# /init, and the stub must have said it filled a non-empty range.
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK_BINARY BUILD_DIR CODEC" >&2; exit 2; }
kpack=$1 dir=$2/boot codec=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir"

image=$(packed_image "$kpack" "$codec" "$vmlinuz" "$dir/dirty-bss")
log=$dir/dirty-bss-$codec.serial.log
KPACK_APPEND="kpack.test_dirty_bss" "$here/boot.sh" --log "$log" "$image" "$initrd"
line=$(grep -a -m1 -o "kpack: test: the kernel's .bss and .brk filled with 0xcc ([1-9][0-9]* pages)" "$log") ||
    { echo "dirty-bss: FAIL: the stub did not fill the kernel's .bss and .brk; see $log" >&2; exit 1; }
echo "dirty-bss: PASS: $codec: ${line#kpack: test: }, and /init ran"
