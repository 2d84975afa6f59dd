#!/usr/bin/env bash
# vga-mode.sh KPACK BP_DIFF MODE IMAGE BUILD_DIR — ctest setup16.vga_mode.MODE.IMAGE: does `vga=` on
# the command line get the video mode it asks for? QEMU's -kernel loader turns `vga=` into
# hdr.vid_mode, which the image's setup must honour (the kernel never parses vga= itself).
#
# QEMU -kernel under SeaBIOS, -vga std, console=ttyS0 (boot.sh), kpack.bootparams kpack.screen.
# MODE:
#   ext     vga=ext: 80x50 text. The kernel's "Console: colour VGA+ 80x50" on the serial log, and
#           screen_info's orig_video_cols/lines = 80/50 in the boot_params dump.
#   normal  vga=normal: the same for 80x25.
#   vesa    vga=0x344: VESA mode 0x144 (+0x200), 1024x768x32 with a linear framebuffer, as SeaBIOS's
#           vgabios for QEMU's std VGA numbers it (0x118, the standard number, is 24 bpp there).
#           Needs a framebuffer driver, so the generic kernel (vesafb) boots: /proc/fb lists a
#           framebuffer, fb0 is 1024,768 at 32 bpp, and screen_info says VIDEO_TYPE_VLFB (0x23)
#           with lfb_width/height/depth 1024/768/32.
# IMAGE: stock (the Debian image: cloud kernel, generic for vesa) or a kpack codec of it.
# Exit: 0 pass, 1 fail, 77 skip (no QEMU).
set -euo pipefail

[[ $# -eq 5 ]] || { echo "usage: $0 KPACK BP_DIFF MODE IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 bpdiff=$2 mode=$3 kind=$4 build=$5
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
setup16_fixture "$build"

case $mode in
    ext)    kernel=$vmlinuz vga=ext   want_cols=80 want_lines=50 ;;
    normal) kernel=$vmlinuz vga=normal want_cols=80 want_lines=25 ;;
    vesa)   kernel=$generic vga=0x344 ;;
    *) echo "vga-mode: unknown mode '$mode'" >&2; exit 2 ;;
esac
image=$(image_path "$kpack" "$kind" "$kernel")
name=vga_mode-$mode-$kind
log=$out/$name.serial.log

status=0
KPACK_APPEND="vga=$vga kpack.bootparams kpack.screen" \
    "$boot_sh" --log "$log" "$image" "$initrd" -vga std || status=$?
[[ $status -ne 77 ]] || exit 77

failures=()
check() {  # check WHAT GOT WANT
    if [[ $2 == "$3" ]]; then echo "vga-mode: ok: $1 = $2"; else failures+=("$1 = '$2', want '$3'"); fi
}
if [[ $status -ne 0 ]]; then
    failures+=("the image did not boot to /init")
elif ! "$bpdiff" --get hdr.boot_flag "$log" >/dev/null; then
    failures+=("no boot_params dump in the log")
else
    # Lines of the serial log, without the CR the tty adds.
    fact() { grep -a -m1 -o "$1.*" "$log" | tr -d '\r' || true; }
    value() { local f; f=$(fact "$1"); echo "${f#"$1"}"; }
    field() { "$bpdiff" --get "screen_info.$1" "$log"; }  # from the boot_params dump
    if [[ $mode != vesa ]]; then
        console=$(fact 'Console: colour [^ ]* [0-9]*x[0-9]*')
        check "kernel console" "$console" "Console: colour VGA+ ${want_cols}x$want_lines"
        check "screen_info.orig_video_cols" "$(field orig_video_cols)" "$want_cols"
        check "screen_info.orig_video_lines" "$(field orig_video_lines)" "$want_lines"
    else
        fb=$(fact 'KPACK_SCREEN proc_fb=')
        [[ -n $fb && $fb != *=none ]] && echo "vga-mode: ok: $fb" || failures+=("no framebuffer in /proc/fb ('$fb')")
        check "fb0.virtual_size" "$(value 'KPACK_SCREEN fb0.virtual_size=')" 1024,768
        check "fb0.bits_per_pixel" "$(value 'KPACK_SCREEN fb0.bits_per_pixel=')" 32
        check "screen_info.orig_video_isVGA" "$(field orig_video_isVGA)" 35  # VIDEO_TYPE_VLFB
        check "screen_info.lfb_width" "$(field lfb_width)" 1024
        check "screen_info.lfb_height" "$(field lfb_height)" 768
        check "screen_info.lfb_depth" "$(field lfb_depth)" 32
    fi
fi

if [[ ${#failures[@]} -eq 0 ]]; then
    echo "vga-mode: PASS: vga=$vga with $kind"
    exit 0
fi
for f in "${failures[@]}"; do echo "vga-mode: FAIL: vga=$vga with $kind: $f" >&2; done
echo "---- kernel's video lines in $log ----" >&2
grep -a -E 'Console:|fb0|vesafb|KPACK_SCREEN|kpack:' "$log" >&2 || true
exit 1
