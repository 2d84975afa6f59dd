#!/usr/bin/env bash
# boot-corrupt.sh KPACK MODE BUILD_DIR — pack the test kernel with MODE (gzip, lz4, zstd, xz or raw),
# damage the image, boot it, and require the stub to refuse it: a "kpack: error" line on the
# serial console, then a halt — no reset or triple fault (QEMU still running at the timeout) and
# no kernel start (no "Linux version" in the log).
#
#   gzip, lz4, zstd, xz  64 bytes overwritten a third of the way into the payload: inside the
#                    text segment's frame, after the headers were read and the kernel placed, so
#                    the frame checksum (or the decoder) catches it mid-unpack; for lz4 and zstd
#                    the digest of the compressed frame, taken right after the frame is decoded
#   raw              the ELF magic at the start of the payload overwritten: caught before any write
#   record-magic     (lz4) the kpack record's magic overwritten: caught before the stub maps or
#                    relocates anything
#   record-image-size  (lz4) the record's image_size shrunk below the stub's own end
#   efi-lz4          as lz4, started by OVMF through the image's PE entry, which decodes after
#                    ExitBootServices (as the stock 6.1 image's decompressor does): the same halt,
#                    with the EFI entry's line before it and no boot manager after it
#   panic-lz4, efi-panic-lz4  as lz4 and efi-lz4 with panic=5 on the command line: the stub prints
#                    its error, waits 5 s and resets the machine (QEMU without -no-reboot), and the
#                    machine boots again: required, the second boot's first stub line after "kpack: resetting",
#                    4-9 s of wall time between the error line and it, and the second boot's error
#   elf-lz4          as lz4, in the ELF for direct-boot VMMs (kpack --elf), booted by PVH through
#                    QEMU -kernel: the same refusal from the PVH entry
#   efi-lz4-before-exit  the same with kpack.test_decode_before_exit: the confidential VMs' order,
#                    decoded before ExitBootServices, so the error goes to the firmware console and
#                    the entry returns an EFI status; the boot manager goes on to its next boot
#                    option (required: a BdsDxe line after the error)
#
# Needs BUILD_DIR/boot/kernel-6.1.path and BUILD_DIR/boot/initramfs.cpio.gz (the boot.fetch test).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK MODE BUILD_DIR" >&2; exit 2; }
kpack=$1 mode=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/damaged_image.sh"
source "$here/../lib/qemu.sh"
damaged_image_setup "$3" "$mode"

codec=$mode expect='kpack: error' firmware=() timeout_s=25
format=()
case $mode in
    panic-lz4) codec=lz4 ;;
    elf-lz4) codec=lz4 format=(--elf) expect='kpack: error: payload frame digest mismatch' ;;
    efi-panic-lz4)
        codec=lz4 expect='kpack: error: payload frame digest mismatch' firmware=(-bios /usr/share/qemu/OVMF.fd) ;;
    efi-lz4|efi-lz4-before-exit)
        codec=lz4 expect='kpack: error: payload frame digest mismatch' firmware=(-bios /usr/share/qemu/OVMF.fd) timeout_s=30 ;;
    record-magic) codec=lz4 expect='kpack: error: the kpack record after the stub has no magic' ;;
    record-image-size) codec=lz4 expect="kpack: error: the kpack record's image size does not cover the stub" ;;
esac
level=(--level 1)  # the content does not matter here, only that it is damaged: pack fast
[[ $codec == raw ]] && level=()
"$kpack" "${format[@]}" "--$codec" "${level[@]}" "$vmlinuz" -o "$image"

# The payload's place in the file: after a bzImage's setup sectors (its header's payload_offset),
# or in an ELF's PT_LOAD, where the kpack record (found through kpack's own note) says.
read -r offset length < <(python3 -c 'import struct,sys
d=open(sys.argv[1],"rb").read()
if d[:4] == b"\x7fELF":
    phoff, = struct.unpack_from("<Q", d, 0x20); phnum, = struct.unpack_from("<H", d, 0x38)
    load = note = None
    for i in range(phnum):
        p_type, _, p_offset = struct.unpack_from("<IIQ", d, phoff + 56 * i)
        p_filesz, = struct.unpack_from("<Q", d, phoff + 56 * i + 32)
        if p_type == 1: load = p_offset
        if p_type == 4: note = (p_offset, p_filesz)
    at, record = note[0], None
    while at < note[0] + note[1]:
        namesz, descsz, ntype = struct.unpack_from("<III", d, at)
        name = d[at + 12:at + 12 + namesz].rstrip(b"\0")
        desc = at + 12 + (namesz + 3) // 4 * 4
        if name == b"kpack": record = load + struct.unpack_from("<Q" if descsz == 8 else "<I", d, desc)[0]
        at = desc + (descsz + 3) // 4 * 4
    payload, size = struct.unpack_from("<QQ", d, record + 16)
    print(load + payload, size)
else:
    off, length = struct.unpack_from("<II", d, 0x248)
    print(((d[0x1F1] or 4) + 1) * 512 + off, length)' "$image")
# The record sits right before kernel_info (formats/kpack_image.h); image_size is its 5th field.
record=$(python3 -c 'import struct,sys
d=open(sys.argv[1],"rb").read(0x270)
print(((d[0x1F1] or 4)+1)*512+struct.unpack_from("<I",d,0x268)[0]-88)' "$image")
if [[ $mode == record-magic ]]; then
    printf 'NOPE' | dd of="$image" bs=1 seek="$record" conv=notrunc status=none
elif [[ $mode == record-image-size ]]; then
    printf '\x00\x10\x00\x00\x00\x00\x00\x00' | dd of="$image" bs=1 seek=$((record + 32)) conv=notrunc status=none
elif [[ $mode == raw ]]; then
    printf 'NOPE' | dd of="$image" bs=1 seek="$offset" conv=notrunc status=none
else
    head -c 64 /dev/zero | tr '\0' '\336' | dd of="$image" bs=1 seek=$((offset + length / 3)) conv=notrunc status=none
fi
echo "boot-corrupt: $mode image, payload at $offset ($length bytes), damaged; booting"

# panic=5: a reset after 5 s, then the same boot again. The first boot's error line and the reset
# are timed from the host, polling the serial log.
if [[ $mode == *panic-lz4 ]]; then
    # The second boot's first lines: the firmware prints nothing on COM1, the stub its first line.
    banner='kpack: free memory from e820'
    [[ $mode == efi-* ]] && banner='kpack: efi entry'
    : > "$log"
    qemu_machine "file:$log" --reboot  # the reset must start the machine again
    timeout -k 5 60 "${qemu_cmd[@]}" \
        -kernel "$image" -initrd "$initrd" -append "console=ttyS0 kpack.debug panic=5" "${firmware[@]}" &
    qemu_pid=$!
    error_at= reset_at=
    while kill -0 "$qemu_pid" 2>/dev/null; do
        [[ -z $error_at ]] && grep -aq 'kpack: error' "$log" && error_at=$EPOCHREALTIME
        if [[ -z $reset_at ]] && grep -aEq 'kpack: resetting[[:space:]]*$' "$log"; then reset_at=$EPOCHREALTIME; fi
        # The second boot has run into the same error: enough.
        [[ $(grep -ac 'kpack: error' "$log") -ge 2 ]] && break
        sleep 0.1
    done
    kill "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
    grep -a 'kpack: ' "$log" || true
    require_no_kernel_start "the kernel started from a damaged image"
    fail() { echo "boot-corrupt: FAIL: $*" >&2; exit 1; }
    [[ -n $error_at ]] || fail "no error line"
    grep -aq 'kpack: the kernel was not started; resetting in 5 s (panic=5)' "$log" || fail "no reset announced"
    [[ -n $reset_at ]] || fail "the stub did not reset"
    waited=$(awk -v a="$error_at" -v b="$reset_at" 'BEGIN { printf "%.1f", b - a }')
    awk -v w="$waited" 'BEGIN { exit !(w >= 4 && w <= 9) }' || fail "reset after ${waited}s, not about 5 s"
    # The machine started again: the firmware ran the image again, which refused the payload again.
    grep -aEq "$banner" <<< "$(sed -n '/kpack: resetting[[:space:]]*$/,$p' "$log")" || fail "no second boot after the reset"
    [[ $(grep -ac 'kpack: error' "$log") -ge 2 ]] || fail "the second boot did not reach the stub"
    echo "boot-corrupt: PASS: $mode image refused, the machine reset after ${waited}s and booted again"
    exit 0
fi

status=0
append=kpack.debug
[[ $mode == efi-lz4-before-exit ]] && append+=" kpack.test_decode_before_exit"
KPACK_APPEND=$append "$here/../boot/boot.sh" --timeout "$timeout_s" --log "$log" --expect-fail "$expect" \
    "$image" "$initrd" "${firmware[@]}" || status=$?
[[ $status -eq 0 ]] || exit $status
grep -a 'kpack: ' "$log" || true
require_no_kernel_start "the kernel started from a damaged image"
if [[ $mode == efi-* ]]; then
    grep -aq 'kpack: efi entry' "$log" || { echo "boot-corrupt: FAIL: the EFI entry did not run" >&2; exit 1; }
fi
if [[ $mode == efi-lz4-before-exit ]]; then
    # Returned to the firmware: its boot manager tries the next option after our error line.
    grep -aq 'BdsDxe: ' <<< "$(sed -n '/kpack: error/,$p' "$log")" ||
        { echo "boot-corrupt: FAIL: the boot manager did not go on after the error" >&2; exit 1; }
else
    # efi-lz4: boot services were gone, so nothing of the firmware's may run after the error line.
    if grep -aq 'BdsDxe: ' <<< "$(sed -n '/kpack: error/,$p' "$log")"; then
        echo "boot-corrupt: FAIL: the firmware's boot manager ran after the error" >&2
        exit 1
    fi
    grep -aq 'the kernel was not started' "$log" || { echo "boot-corrupt: FAIL: no halt message" >&2; exit 1; }
fi
echo "boot-corrupt: PASS: $mode image refused"
