#!/usr/bin/env bash
# vga-screen.sh KPACK IMAGE BUILD_DIR — ctest setup16.vga.IMAGE: does the kernel's log reach a VGA
# text screen? (With screen_info left empty vgacon gives up and the screen keeps showing SeaBIOS's
# "Booting from ROM..."; see doc/setup16.md.)
#
# QEMU -kernel under SeaBIOS, -vga std, -display none, and no console=ttyS0: the kernel and /init
# write to the VGA console only. -no-shutdown keeps the machine (and its video memory) after /init
# powers it off. vga-text.py reads the text window 0xb8000-0xbffff from outside through QMP
# (pmemsave) until it has shown both /init's KPACK_INIT_OK and the kernel's "Run /init as init
# process" (its last line before /init; the "Linux version" banner has usually scrolled out of the
# 32 KiB by then), or the time is up; the screen's text is printed either way.
# IMAGE: stock (the Debian 6.1 cloud bzImage) or a kpack codec of it (raw, gzip, lz4, zstd).
# Exit: 0 pass, 1 fail, 77 skip (no QEMU or python3).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 kind=$2 build=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/qemu.sh"
setup16_fixture "$build"
qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || { echo "vga-screen: $qemu not found; skipping" >&2; exit 77; }
command -v python3 >/dev/null || { echo "vga-screen: python3 not found; skipping" >&2; exit 77; }

image=$(image_path "$kpack" "$kind")
name=vga-$kind
sock=$out/$name.qmp
log=$out/$name.serial.log
rm -f "$sock"
# Serial still goes to a file: kpack's stub reports its own errors there.
qemu_machine "file:$log"
cmd=("${qemu_cmd[@]}" -vga std -no-shutdown -qmp "unix:$sock,server=on,wait=off"
     -kernel "$image" -initrd "$initrd" -append "panic=-1")
timeout -k 5 120 "${cmd[@]}" 2> "$log.qemu-stderr" &
qemu_pid=$!
status=0
QEMU_PID=$qemu_pid python3 "$setup16_here/vga-text.py" "$sock" "$out/$name.vram" 60 KPACK_INIT_OK "Run /init as init process" || status=$?
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
rm -f "$sock"

if [[ $status -eq 0 ]]; then
    echo "vga-screen: PASS: $kind: the kernel log and KPACK_INIT_OK are on the VGA text screen"
    exit 0
fi
echo "vga-screen: FAIL: $kind: the VGA text screen lacks KPACK_INIT_OK or \"Run /init as init process\" (text: $out/$name.vram.txt)" >&2
echo "vga-screen: command: $(printf '%q ' "${cmd[@]}")" >&2
echo "---- serial log $log (the kernel logs to VGA only) ----" >&2
tail -n 20 "$log" >&2
if [[ -s $log.qemu-stderr ]]; then
    echo "---- qemu stderr ----" >&2
    tail -n 20 "$log.qemu-stderr" >&2
fi
exit 1
