#!/usr/bin/env bash
# efi-smp-boot.sh KPACK_BINARY CELL IMAGE CPUS BUILD_DIR [KERNEL WORDS...] — boot one kpack image
# through one EFI cell (tests/efi/efi-boot.sh: `kernel` and `systemd-boot` for the PE entry,
# `grub-linuxefi` for the handover entry) on an OVMF machine with CPUS processors, and check that the APs decoded frames
# (the stub starts them itself after ExitBootServices) and that the kernel started them all afterwards:
#
#   - the stub's kpack.debug line "kpack: cpus: F found, S started, R ran, R returned, L late;
#     ...; frames: N, H by helpers, D redone" with F = CPUS, S = R = CPUS - 1, L = 0, and H >= 1
#     (the number, not the text: the APs decoded at least one frame); with kpack.test_stopped_helper
#     one AP never returns (the stub's bounded wait gives up on it and sends INIT): 1 returned less and
#     "1 redone" (the boot CPU decoded its frame again); a raw image decodes nothing, so the stub
#     looks for no CPU: "0 found, 0 started, 0 ran, 0 returned, 0 late; ...; frames: 0, 0 by helpers";
#   - /init's marker (KPACK_INIT_OK) and /sys/devices/system/cpu/online = 0-(CPUS-1).
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
[[ $# -ge 5 ]] || { echo "usage: $0 KPACK_BINARY CELL IMAGE CPUS BUILD_DIR [WORDS...]" >&2; exit 2; }
kpack=$1 cell=$2 image=$3 cpus=$4 build=$5
shift 5
words="$*"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tag=-smp$cpus$(echo " $words" | tr -c 'a-z0-9\n' '_' | tr -s '_' | sed 's/_$//')
log=$build/boot/efi/$cell-$image$tag.serial.log
status=0
KPACK_EFI_TAG=$tag KPACK_EFI_WORDS="kpack.cpuonline $words" KPACK_EFI_QEMU_ARGS="-smp $cpus" \
    "$here/efi-boot.sh" "$kpack" "$cell" "$image" "$build" || status=$?
[[ $status -eq 0 ]] || exit $status

fail() { echo "efi-smp-boot: FAIL: $*; see $log" >&2; exit 1; }
line=$(grep -a -m1 'kpack: cpus: [0-9]* found' "$log" | tr -d '\r') || fail "no 'kpack: cpus:' line"
echo "efi-smp-boot: $line"
grep -a 'kpack: cpus: one CPU' "$log" || true
read -r found started ran returned late frames helped redone < <(echo "$line" | sed -n \
    's/.*cpus: \([0-9]*\) found, \([0-9]*\) started, \([0-9]*\) ran, \([0-9]*\) returned, \([0-9]*\) late.*frames: \([0-9]*\), \([0-9]*\) by helpers, \([0-9]*\) redone.*/\1 \2 \3 \4 \5 \6 \7 \8/p')
[[ -n ${redone:-} ]] || fail "cannot read '$line'"
want_started=$((cpus - 1)) want_returned=$((cpus - 1)) want_redone=0 want_helped=1
if [[ " $words " == *" kpack.test_stopped_helper "* ]]; then
    want_returned=$((cpus - 2)) want_redone=1
    # The stopped AP's frame counts as the boot CPU's; with two CPUs nobody else helps.
    (( cpus > 2 )) || want_helped=0
fi
want_found=$cpus
if [[ $image == raw ]]; then want_found=0 want_started=0 want_returned=0 want_helped=0; fi
[[ $found -eq $want_found ]] || fail "$found CPUs found, expected $want_found"
[[ $started -eq $want_started && $ran -eq $want_started ]] || fail "$started started, $ran ran, expected $want_started"
[[ $returned -eq $want_returned ]] || fail "$returned returned, expected $want_returned"
[[ $late -eq 0 ]] || fail "$late APs never took their slot"
[[ $redone -eq $want_redone ]] || fail "$redone items redone by the boot CPU, expected $want_redone"
(( helped >= want_helped && helped <= frames )) || fail "$helped of $frames frames by the APs, expected at least $want_helped"
if [[ $image == raw ]]; then
    (( frames == 0 && helped == 0 )) || fail "a raw image decoded $frames frames, $helped by the APs"
else
    # Every CPU that decodes grows QEMU's software TLB first (stub/arch/emulated_tlb.h): the boot CPU's line.
    tlb=$(grep -a -m1 -o 'kpack: QEMU TCG: software TLB grown, [0-9]* pages touched' "$log") ||
        fail "no 'kpack: QEMU TCG: software TLB grown' line: the boot CPU decoded with the TLB QEMU left it"
    [[ ${tlb//[^0-9]/} -gt 0 ]] || fail "'$tlb': no page touched"
fi
online=$(grep -a -m1 '^KPACK_CPU_ONLINE ' "$log" | tr -d '\r' | cut -d' ' -f2) || fail "no KPACK_CPU_ONLINE line"
[[ $online == "0-$((cpus - 1))" ]] || fail "the kernel has CPUs $online online, expected 0-$((cpus - 1))"
echo "efi-smp-boot: PASS: $cell $image -smp $cpus ${words:-(no words)}: $helped of $frames frames by the APs, kernel online $online"
