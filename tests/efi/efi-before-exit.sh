#!/usr/bin/env bash
# efi-before-exit.sh KPACK_BINARY IMAGE BUILD_DIR — the EFI entry's other order, the one it takes in
# a confidential VM (no such VM here): with kpack.test_decode_before_exit, OVMF -kernel boots IMAGE
# with the kernel decoded on the boot CPU into pages claimed from the firmware before
# ExitBootServices, and the kernel entered from the EFI entry. Pass iff /init runs (efi-boot.sh),
# the stub decoded (its "segments" line) with the free memory the EFI entry wrote into e820 from the
# firmware's map before ExitBootServices ("free memory from e820"; after it, the stub reads the EFI
# memory map). Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 KPACK_BINARY IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 image=$2 build=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tag=-before-exit
log=$build/boot/efi/kernel-$image$tag.serial.log
status=0
KPACK_EFI_TAG=$tag KPACK_EFI_WORDS=kpack.test_decode_before_exit \
    "$here/efi-boot.sh" "$kpack" kernel "$image" "$build" || status=$?
[[ $status -eq 0 ]] || exit $status
fail() { echo "efi-before-exit: FAIL: $*; see $log" >&2; exit 1; }
grep -aq 'kpack: segments bytes=' "$log" || fail "no 'kpack: segments' line: the stub did not decode"
grep -aq 'kpack: free memory from e820' "$log" || fail "the kernel was decoded after ExitBootServices (no 'free memory from e820' line)"
echo "efi-before-exit: PASS: $image decoded before ExitBootServices, /init reached"
