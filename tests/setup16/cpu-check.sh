#!/usr/bin/env bash
# cpu-check.sh KPACK IMAGE BUILD_DIR — ctest setup16.cpu_check: a kpack image started on a CPU that
# cannot run the kernel (QEMU's qemu32: no long mode) must say so and halt, as the stock setup's
# validate_cpu does, instead of crashing or resetting.
#
# QEMU -kernel under SeaBIOS with -cpu qemu32 and -vga std; pass iff the serial log shows
# "kpack: error: this CPU cannot run" (the full line names the missing features:
# "kpack: error: this CPU cannot run this kernel: missing <features>", also written to the screen)
# and the machine is still up, halted, when the timeout hits (boot.sh --expect-fail).
#
# The stock image under the same CPU, for comparison: its setup prints "This kernel requires an
# x86-64 CPU, but only detected an i686 CPU." and "Unable to boot - please use a kernel appropriate
# for your CPU." through the BIOS (INT10), so on the VGA screen only; the serial log stays empty
# and the machine halts.
# Exit: 0 pass, 1 fail, 77 skip (no QEMU).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 kind=$2 build=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
setup16_fixture "$build"

image=$(image_path "$kpack" "$kind")
# The error comes from the setup, before any decompression: 15 s is ample even under load.
exec "$boot_sh" --timeout 15 --log "$out/cpu_check-$kind.serial.log" \
    --expect-fail 'kpack: error: this CPU cannot run' "$image" "$initrd" -cpu qemu32 -vga std
