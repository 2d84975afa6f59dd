#!/usr/bin/env bash
# efi-boot.sh KPACK_BINARY CELL IMAGE BUILD_DIR — boot one image through one UEFI path under OVMF.
#
# IMAGE is stock (the Debian 6.1 cloud bzImage, itself a signed PE/EFI application: the control) or
# a kpack codec: raw, gzip, lz4, zstd, xz (packed from that same bzImage by fixture.sh's packed_image,
# shared with tests/loaders), or signed=FILE: a kpack image signed elsewhere (tests/install/hook.sh:
# the kernel hook's), booted with the signature it carries. CELL is one of:
#   kernel        QEMU -kernel/-initrd/-append with OVMF: OVMF starts a PE image through
#                 LoadImage/StartImage (a non-PE one goes to its legacy Linux loader instead, which
#                 is why the entry is checked, see below); initrd through LoadFile2
#   rng           as `kernel`, with a virtio-rng device (so OVMF has EFI_RNG_PROTOCOL): the kernel's
#                 "efi:" line must name the random seed table (RNG=), which the stub installs
#   shell         OVMF's built-in UEFI shell (the only boot option that works: the disk has no
#                 \EFI\BOOT\BOOTX64.EFI) runs \startup.nsh from a FAT ESP, which starts
#                 \linux.efi initrd=\initrd.img ...; the shell's LoadOptions hold the whole line,
#                 program path included
#   systemd-boot  systemd-boot as \EFI\BOOT\BOOTX64.EFI, a Boot Loader Specification entry
#                 (linux, initrd, options): the image through LoadImage, initrd through LoadFile2
#   uki           a unified kernel image (systemd-stub linuxx64.efi.stub + .osrel .cmdline .linux
#                 .initrd sections added with objcopy) started by the firmware as BOOTX64.EFI
#   secureboot    Secure Boot enforced (OVMF_CODE_4M.snakeoil.fd, snakeoil keys enrolled):
#                 systemd-boot and the image both signed with the snakeoil key boot; the kernel
#                 must report "Secure boot enabled" (boot_params.secure_boot from the entry)
#   secureboot.unsigned   the same disk with the image's signature removed (sbattach --remove: the
#                 Debian image is signed by Debian's key): the firmware must refuse it, i.e.
#                 systemd-boot prints "Error loading \linux.efi: Access Denied" (or Security
#                 Violation) and /init never runs
#   secureboot.tampered   the snakeoil-signed image with one byte flipped halfway into the file (past
#                 the headers; sbverify must reject it, so the byte is in the hashed range): refused
#                 the same way
#   grub          GRUB x86_64-efi (grub-mkstandalone) as BOOTX64.EFI from the ESP, `linux` +
#                 `initrd`: Debian's GRUB 2.06 runs its i386 loader there (32-bit entry, GRUB exits
#                 boot services) unless Secure Boot is on
#   grub-linuxefi the same with `linuxefi` + `initrdefi`: the EFI handover protocol (entry at
#                 handover_offset + 0x200 with GRUB's boot_params); images without it fail at once
#
# Before booting: every cell but the GRUB ones needs a PE32+ x86-64 EFI application (MZ, PE,
# subsystem 10), grub-linuxefi an EFI handover (XLF_EFI_HANDOVER_64, handover_offset); an image
# without fails at once with the reason instead of hanging in the firmware. The refusal cells also
# sign the image first, so a file the firmware could not verify at all cannot pass them by being
# refused for the wrong reason.
# Entry checks on a pass: with a kpack image every cell but the GRUB ones requires the stub's line
# "kpack: efi entry" and "kpack: entered by EFI ..." (kpack.debug is on every command line); with the stock image the kernel's own
# "EFI stub: " lines (printed only when the kernel ran its EFI stub through its PE entry). The GRUB
# cells report the entry they saw (GRUB's i386 loader, the handover, the kpack EFI entry); for kpack
# images grub-linuxefi also wants "kpack: efi entry" (the handover runs the same EFI code).
#
# Pass iff the booted kernel's /init prints KPACK_INIT_OK (tests/boot/boot.sh) and the checks above
# hold (refusal cells: iff refused). Files go to BUILD_DIR/boot/efi, named after CELL and IMAGE;
# exit 77 (skip) when a tool or firmware file is missing. KPACK_EFI_TIMEOUT overrides the boot
# timeout (default 120 s; 60 s for refusals, which end as soon as OVMF has nothing left to boot).
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK_BINARY CELL IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 cell=$2 kind=$3 boot_dir=$4/boot
signed_image=
[[ $kind != signed=* ]] || { signed_image=$(realpath "${kind#signed=}"); kind=signed; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
boot_sh=$here/../boot/boot.sh
out=$boot_dir/efi
mkdir -p "$out"
name=$cell-$kind${KPACK_EFI_TAG:-}
work=$out/$name.d          # per-test scratch: ESP image, keys, signed copies
log=$out/$name.serial.log

source "$here/../boot/fixture.sh"
boot_fixture "$boot_dir"

source "$here/../lib/matrix_boot.sh"
source "$here/../lib/qemu.sh"
die() { echo "efi-boot: FAIL: $*" >&2; exit 1; }

# The images tests/loaders packs: one per codec for both suites; or one signed elsewhere.
if [[ $kind == signed ]]; then
    image=$signed_image
else
    image=$(matrix_image "$kpack" "$kind" "$boot_dir/loaders")
fi

ovmf=/usr/share/qemu/OVMF.fd                              # OVMF with an in-RAM variable store
sb_code=/usr/share/OVMF/OVMF_CODE_4M.snakeoil.fd          # Secure Boot: code ...
sb_vars=/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd          # ... and variables, snakeoil PK/KEK/db
sb_key=/usr/share/ovmf/PkKek-1-snakeoil.key               # encrypted, password "snakeoil"
sb_cert=/usr/share/ovmf/PkKek-1-snakeoil.pem
sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
sdstub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
words="kpack.debug${KPACK_EFI_WORDS:+ $KPACK_EFI_WORDS}"
cmdline="console=ttyS0 panic=-1 $words"

case $cell in
    secureboot.unsigned|secureboot.tampered) refusal=1 ;;
    *) refusal= ;;
esac
if [[ -n $refusal ]]; then timeout_s=${KPACK_EFI_TIMEOUT:-60}; else timeout_s=${KPACK_EFI_TIMEOUT:-120}; fi
boot=("$boot_sh" --timeout "$timeout_s" --log "$log")

# Preconditions, checked before any boot so an image that cannot take a path fails in a second
# with the reason rather than after a firmware hang of the full timeout.
u16() { od -An -tu2 -j "$2" -N2 "$1" | tr -d ' '; }
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
require_pe() {   # a PE32+ x86-64 EFI application: what LoadImage and sbsign want
    local f=$1 pe
    [[ $(u16 "$f" 0) == 23117 ]] || die "$f is no PE/EFI application (no MZ at offset 0): nothing for the firmware's LoadImage"
    pe=$(u32 "$f" 60)
    [[ $(u32 "$f" "$pe") == 17744 ]] || die "$f: no PE signature at e_lfanew $pe"
    [[ $(u16 "$f" $((pe + 4))) == 34404 ]] || die "$f: COFF machine is not AMD64"
    [[ $(u16 "$f" $((pe + 24))) == 523 ]] || die "$f: optional header is not PE32+"
    [[ $(u16 "$f" $((pe + 24 + 68))) == 10 ]] || die "$f: subsystem is not 10 (EFI application)"
}
require_handover() {   # what GRUB's linuxefi wants: XLF_EFI_HANDOVER_64 and a handover_offset
    local f=$1
    (( $(u16 "$f" 0x236) & 8 )) || die "$f: xloadflags lack XLF_EFI_HANDOVER_64; GRUB's linuxefi refuses it"
    (( $(u32 "$f" 0x264) != 0 )) || die "$f: handover_offset is 0; GRUB's linuxefi refuses it"
}
case $cell in
    grub) ;;
    grub-linuxefi) require_handover "$image" ;;
    *) require_pe "$image" ;;
esac

rm -rf "$work" && mkdir -p "$work"

# make_esp IMG SRC:DEST... — a FAT32 file system without partition table (OVMF and GRUB take the
# whole disk as one), filled with mtools, no mount. DEST is a path on the ESP; directories made.
make_esp() {
    local img=$1; shift
    local bytes=0 spec src dest dir
    for spec in "$@"; do bytes=$((bytes + $(stat -c %s "${spec%%:*}"))); done
    # FAT32 wants >= ~33 MB; sparse, so a generous size costs nothing.
    local mb=$(( bytes / 1048576 * 5 / 4 + 40 ))
    rm -f "$img"
    mkfs.vfat -C -F 32 -n KPACKESP "$img" $((mb * 1024)) >/dev/null
    for spec in "$@"; do
        src=${spec%%:*} dest=${spec#*:}
        dir=$(dirname "$dest")
        local part= p
        IFS=/ read -ra parts <<< "${dir#/}"
        for p in "${parts[@]}"; do
            [[ -n $p ]] || continue
            part=$part/$p
            mmd -D s -i "$img" "::$part" 2>/dev/null || true
        done
        mcopy -o -i "$img" "$src" "::$dest"
    done
}

# Keys for the Secure Boot cells: the snakeoil key decrypted once per test directory.
sign() {   # sign IN OUT: drop any signature IN carries (Debian's), then sign with the snakeoil key
    [[ -s $work/db.key ]] || openssl rsa -in "$sb_key" -passin pass:snakeoil -out "$work/db.key" 2>/dev/null \
        || die "cannot decrypt $sb_key"
    unsign "$1" "$2.unsigned"
    sbsign --key "$work/db.key" --cert "$sb_cert" --output "$2" "$2.unsigned" >"$work/sbsign.log" 2>&1 \
        || { cat "$work/sbsign.log" >&2; die "sbsign refused $1 (not a PE image sbsign can sign)"; }
    rm -f "$2.unsigned"
    sbverify --cert "$sb_cert" "$2" >/dev/null 2>&1 || die "sbverify does not accept the freshly signed $2"
}
unsign() { # unsign IN OUT: a copy without Authenticode signatures (a no-op copy if there are none)
    cp "$1" "$2"
    if grep -q '^signature' <<< "$(sbverify --list "$2" 2>/dev/null)"; then
        sbattach --remove "$2" >"$work/sbattach.log" 2>&1 || { cat "$work/sbattach.log" >&2; die "sbattach --remove failed on $1"; }
    fi
}

# The stub's line on entering through EFI: the whole rest of its line (firmware escape sequences
# may precede it on the same line of the log; a CR may end it).
efi_entry_line=$'kpack: efi entry\r?$'
# What the log says about the entry the image was started through.
entry_taken() {
    local handover=
    grep -aq 'i386/efi/linux.c:[0-9]*: kernel_mem' "$log" && handover=1
    if [[ -n $handover ]] && grep -aqE "$efi_entry_line" "$log"; then echo "the EFI handover entry (GRUB linuxefi) into kpack's EFI code"
    elif [[ -n $handover ]]; then echo "the EFI handover entry (GRUB linuxefi)"
    elif grep -aqE "$efi_entry_line" "$log"; then echo "kpack EFI entry"
    elif grep -aq 'Booting in blind mode' "$log"; then echo "GRUB's i386 loader (32-bit entry, no EFI stub)"
    elif grep -aq 'EFI stub: ' "$log"; then echo "the kernel's EFI stub"
    elif grep -aq '^kpack: ' "$log"; then echo "kpack stub, not through its EFI entry"
    else echo "unknown (no EFI stub or kpack line)"; fi
}
check_entry() {
    if [[ $kind == stock ]]; then
        grep -aq 'EFI stub: ' "$log" || die "the stock image reached /init without an 'EFI stub: ' line; see $log"
        # The control also shows how each path hands over the initrd: the shell only through
        # `initrd=` (its LoadOptions), the others through LoadFile2 (OVMF -kernel and systemd-boot
        # also put an initrd= on the command line; the kernel prefers LoadFile2).
        local how='LINUX_EFI_INITRD_MEDIA_GUID'
        [[ $cell != shell ]] || how='command line option'
        grep -aq "EFI stub: Loaded initrd from $how" "$log" \
            || die "the stock kernel did not say 'EFI stub: Loaded initrd from $how'; see $log"
    else
        grep -aqE "$efi_entry_line" "$log" || die "no 'kpack: efi entry' line: the image did not run through its EFI entry ($(entry_taken)); see $log"
        # The EFI entry enters the boot path once, with its record checked and the stub relocated
        # once (boot.sh holds the counts to 1 wherever the line appears).
        grep -aqE 'kpack: entered by EFI (PE|handover); record checks' "$log" \
            || die "no 'kpack: entered by EFI' line: the EFI entry never reached the boot path; see $log"
    fi
}

# Secure Boot firmware: SMM, the secure flash, code read-only, a private copy of the variables.
sb_machine() {
    need_file "$sb_code" "$sb_vars"
    cp "$sb_vars" "$work/vars.fd"
    qemu_fw=(-machine q35,smm=on -global driver=cfi.pflash01,property=secure,value=on
             -drive "if=pflash,format=raw,unit=0,readonly=on,file=$sb_code"
             -drive "if=pflash,format=raw,unit=1,file=$work/vars.fd")
}

# systemd-boot ESP: LOADER as BOOTX64.EFI, KERNEL as \linux.efi, one entry, no menu.
sdboot_esp() {
    local loader=$1 kernel=$2
    printf 'timeout 0\ndefault kpack.conf\nconsole-mode keep\n' > "$work/loader.conf"
    printf 'title kpack %s\nlinux /linux.efi\ninitrd /initrd.img\noptions %s\n' "$kind" "$cmdline" > "$work/kpack.conf"
    make_esp "$work/esp.img" "$loader:/EFI/BOOT/BOOTX64.EFI" "$kernel:/linux.efi" "$initrd:/initrd.img" \
        "$work/loader.conf:/loader/loader.conf" "$work/kpack.conf:/loader/entries/kpack.conf"
}

# refused QEMU_ARGS... — the refusal cells: boot.sh's --expect-fail would sit out its whole
# timeout, but here the end is visible: after systemd-boot reports the refused kernel, OVMF falls
# back to its shell (itself refused: unsigned) and then prints "No bootable option". QEMU runs with
# boot.sh's machine flags until that line, the marker or the timeout, and is then ended. Pass iff
# systemd-boot (so it was accepted) said the firmware refused \linux.efi and /init never ran.
refused() {
    local qemu=${QEMU:-qemu-system-x86_64} elapsed start=$EPOCHREALTIME
    command -v "$qemu" >/dev/null || skip "$qemu not installed"
    : > "$log"
    qemu_machine "file:$log"
    local cmd=("${qemu_cmd[@]}" "$@")
    qemu_run_until "$log" 'BdsDxe: No bootable option|KPACK_INIT_OK' "$timeout_s" "${cmd[@]}" 2> "$log.qemu-stderr"
    elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    local why=
    if grep -aq KPACK_INIT_OK "$log"; then why="the image was started: /init ran"
    elif ! grep -aqE 'Error loading \\linux\.efi: (Access Denied|Security Violation)' "$log"; then
        why="no 'Error loading \\linux.efi: Access Denied' (or Security Violation) from systemd-boot"
    fi
    if [[ -n $why ]]; then
        echo "efi-boot: FAIL: $why (${elapsed}s)" >&2
        echo "efi-boot: command: $(printf '%q ' "${cmd[@]}")" >&2
        echo "---- last 30 lines of serial log $log ----" >&2
        tail -n 30 "$log" | sed 's/\x1b\[[0-9;=?]*[a-zA-Z]//g' >&2
        return 1
    fi
    echo "efi-boot: PASS: refused: $(grep -aoE -m1 'Error loading [^[:cntrl:]]*' "$log") (${elapsed}s wall)"
}

# boot_watched BOOT_SH_ARGS... — boot.sh, but a CPU exception the firmware catches ends the boot at
# once: OVMF prints "!!!! X64 Exception ..." with the registers and then spins until the timeout.
# So does a "kpack: error:" line (the EFI entry returns to the boot manager, which may then sit at
# a prompt).
# QEMU's own -pidfile names the process to end; the failure then shows the faulting RIP as an
# offset into the image that contains it (an RVA, when that image is ours).
boot_watched() {
    local pidfile=$work/qemu.pid bpid st=0 crashed=
    rm -f "$pidfile" "$log"
    "${boot[@]}" "$@" -pidfile "$pidfile" &
    bpid=$!
    while kill -0 "$bpid" 2>/dev/null; do
        if [[ -s $pidfile ]] && grep -aqE '!!!! X64 Exception|kpack: error:' "$log" 2>/dev/null; then
            sleep 1   # the rest of the register dump or error line
            crashed=1
            kill "$(cat "$pidfile")" 2>/dev/null || true
            break
        fi
        sleep 1
    done
    wait "$bpid" || st=$?
    if [[ -n $crashed ]] && ! grep -aq '!!!! X64 Exception' "$log"; then
        echo "efi-boot: FAIL: the stub reported an error (QEMU ended at once): $(grep -ao -m1 'kpack: error:[^[:cntrl:]]*' "$log")" >&2
        st=1
    elif [[ -n $crashed ]]; then
        local rip base where= soi
        rip=$(grep -aoE -m1 'RIP  - [0-9A-F]+' "$log" | awk '{ print $3 }')
        base=$(grep -aoE -m1 'ImageBase=[0-9A-F]+' "$log" | cut -d= -f2)
        # OVMF names the loaded image around RIP; only an offset inside our image's SizeOfImage is
        # an RVA of it (under GRUB's handover the image is not one the firmware loaded).
        soi=$(objdump -p "$image" 2>/dev/null | awk '/^SizeOfImage/ { print $2 }')
        if [[ -n $rip && -n $base && -n $soi ]] && (( 16#$rip >= 16#$base && 16#$rip - 16#$base < 16#$soi )); then
            where=" = ImageBase $base + RVA 0x$(printf '%X' $((16#$rip - 16#$base)))"
        fi
        echo "efi-boot: FAIL: CPU exception caught by the firmware (QEMU ended at once); RIP $rip$where" >&2
        st=1
    fi
    return "$st"
}

disk=()
qemu_fw=(-bios "$ovmf" ${KPACK_EFI_QEMU_ARGS:-})
status=0
case $cell in
    kernel)
        need_file "$ovmf"
        export KPACK_APPEND=$words
        boot_watched "$image" "$initrd" "${qemu_fw[@]}" || status=$? ;;
    rng)
        need_file "$ovmf"
        export KPACK_APPEND=$words
        boot_watched "$image" "$initrd" "${qemu_fw[@]}" -device virtio-rng-pci || status=$?
        if [ "$status" -eq 0 ] && ! grep -aqE 'efi: .* RNG=0x' "$log"; then
            echo "FAIL: no random seed table (RNG=) in the kernel's efi: line" >&2
            status=1
        fi ;;
    shell)
        need mkfs.vfat mcopy mmd; need_file "$ovmf"
        # CRLF: the shell's script parser accepts either; CRLF is what it writes itself.
        printf '@echo -off\r\nfs0:\r\n\\linux.efi initrd=\\initrd.img %s\r\n' "$cmdline" > "$work/startup.nsh"
        make_esp "$work/esp.img" "$image:/linux.efi" "$initrd:/initrd.img" "$work/startup.nsh:/startup.nsh"
        disk=(-drive "file=$work/esp.img,format=raw,if=virtio")
        boot_watched --no-kernel "$image" "$initrd" "${qemu_fw[@]}" "${disk[@]}" || status=$? ;;
    systemd-boot)
        need mkfs.vfat mcopy mmd; need_file "$ovmf" "$sdboot"
        sdboot_esp "$sdboot" "$image"
        disk=(-drive "file=$work/esp.img,format=raw,if=virtio")
        boot_watched --no-kernel "$image" "$initrd" "${qemu_fw[@]}" "${disk[@]}" || status=$? ;;
    uki)
        need mkfs.vfat mcopy mmd objcopy; need_file "$ovmf" "$sdstub"
        # Section addresses as systemd-stub's documentation gives them for objcopy-built UKIs, after
        # the stub's own image (SizeOfImage ~0x19300 in systemd 252); .initrd after .linux.
        printf 'NAME="kpack test"\nID=kpack\nPRETTY_NAME="kpack %s"\n' "$kind" > "$work/os-release"
        printf '%s' "$cmdline" > "$work/cmdline"
        linux_vma=0x2000000
        initrd_vma=$(printf '0x%x' $(( (linux_vma + $(stat -c %s "$image") + 0xfffff) & ~0xfffff )))
        (( initrd_vma >= 0x3000000 )) || initrd_vma=0x3000000
        objcopy \
            --add-section .osrel="$work/os-release" --change-section-vma .osrel=0x20000 \
            --add-section .cmdline="$work/cmdline" --change-section-vma .cmdline=0x30000 \
            --add-section .linux="$image" --change-section-vma .linux=$linux_vma \
            --add-section .initrd="$initrd" --change-section-vma .initrd="$initrd_vma" \
            "$sdstub" "$work/uki.efi" 2>"$work/objcopy.log" \
            || { cat "$work/objcopy.log" >&2; die "objcopy could not build the UKI"; }
        make_esp "$work/esp.img" "$work/uki.efi:/EFI/BOOT/BOOTX64.EFI"
        disk=(-drive "file=$work/esp.img,format=raw,if=virtio")
        boot_watched --no-kernel "$image" "$initrd" "${qemu_fw[@]}" "${disk[@]}" || status=$? ;;
    secureboot|secureboot.unsigned|secureboot.tampered)
        need mkfs.vfat mcopy mmd sbsign sbverify sbattach openssl
        need_file "$sb_key" "$sb_cert" "$sdboot"
        sb_machine
        sign "$sdboot" "$work/systemd-bootx64.signed.efi"
        case $cell in
            secureboot)
                if [[ $kind == signed ]]; then cp "$image" "$work/linux.efi"; else sign "$image" "$work/linux.efi"; fi ;;
            secureboot.unsigned)
                # The refusal must be for the missing signature, not for a file that is no PE:
                # sbsign accepting the image is the proof that it is one.
                sign "$image" "$work/linux.check.efi" && rm -f "$work/linux.check.efi"
                unsign "$image" "$work/linux.efi"
                if grep -q '^signature' <<< "$(sbverify --list "$work/linux.efi" 2>/dev/null)"; then
                    die "$work/linux.efi still carries a signature"
                fi ;;
            secureboot.tampered)
                sign "$image" "$work/linux.efi"
                size=$(stat -c %s "$work/linux.efi")
                hdrs=$((16#$(objdump -p "$work/linux.efi" | awk '/^SizeOfHeaders/ { print $2 }')))
                off=$((size / 2))
                (( off > hdrs )) || die "image too small to tamper with past its headers"
                byte=$(od -An -tu1 -j "$off" -N1 "$work/linux.efi" | tr -d ' ')
                printf "$(printf '\\%03o' $((byte ^ 0xff)))" \
                    | dd of="$work/linux.efi" bs=1 seek="$off" count=1 conv=notrunc status=none
                # The flip must land in the hashed range: sbverify now rejects the file.
                if sbverify --cert "$sb_cert" "$work/linux.efi" >/dev/null 2>&1; then
                    die "sbverify still accepts the image with byte $off flipped"
                fi
                echo "efi-boot: flipped byte $off of $size (SizeOfHeaders $hdrs)" ;;
        esac
        sdboot_esp "$work/systemd-bootx64.signed.efi" "$work/linux.efi"
        disk=(-drive "file=$work/esp.img,format=raw,if=virtio")
        if [[ -n $refusal ]]; then
            refused "${qemu_fw[@]}" "${disk[@]}" || status=$?
        else
            boot_watched --no-kernel "$image" "$initrd" "${qemu_fw[@]}" "${disk[@]}" || status=$?
        fi ;;
    grub|grub-linuxefi)
        need grub-mkstandalone mkfs.vfat mcopy mmd
        need_file "$ovmf" /usr/lib/grub/x86_64-efi/linux.mod /usr/lib/grub/x86_64-efi/linuxefi.mod
        # Debian's GRUB 2.06 has two loaders: linux.mod's `linux` is the i386 loader (it hands over to
        # linuxefi only when Secure Boot is on), linuxefi.mod's `linuxefi` the EFI handover protocol
        # (refuses images without handover_offset). debug=linuxefi makes the latter show itself.
        if [[ $cell == grub ]]; then cmd=linux debug=; else cmd=linuxefi debug=linuxefi; fi
        cat > "$work/grub.cfg" <<EOF
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
set debug=$debug
search --no-floppy --file --set=root /linux.efi
echo "efi-boot: GRUB \$grub_platform $cmd from \$root"
$cmd /linux.efi $cmdline
initrd${cmd#linux} /initrd.img
boot
EOF
        grub-mkstandalone -O x86_64-efi -o "$work/grubx64.efi" \
            --modules="fat part_msdos search serial echo $cmd" --locales= --fonts= --themes= \
            "boot/grub/grub.cfg=$work/grub.cfg" >"$work/mkstandalone.log" 2>&1 \
            || { cat "$work/mkstandalone.log" >&2; die "grub-mkstandalone failed"; }
        make_esp "$work/esp.img" "$work/grubx64.efi:/EFI/BOOT/BOOTX64.EFI" "$image:/linux.efi" "$initrd:/initrd.img"
        disk=(-drive "file=$work/esp.img,format=raw,if=virtio")
        boot_watched --no-kernel "$image" "$initrd" "${qemu_fw[@]}" "${disk[@]}" || status=$? ;;
    *)
        echo "efi-boot: unknown cell '$cell'" >&2; exit 2 ;;
esac

[[ $status -eq 0 ]] || exit "$status"
if [[ -z $refusal ]]; then
    if [[ $cell == grub* ]]; then
        # The handover runs kpack's EFI code too (same line); GRUB's i386 loader does not.
        if [[ $cell == grub-linuxefi && $kind != stock ]] && ! grep -aqE "$efi_entry_line" "$log"; then
            die "GRUB's linuxefi booted the image without its 'kpack: efi entry' line ($(entry_taken)); see $log"
        fi
        echo "efi-boot: GRUB $cmd started the image through: $(entry_taken)"
    else
        check_entry
    fi
    # The stub's run report, among the setup_data nodes the kernel kept (init lists their types).
    if [[ $kind != stock ]] && ! grep -aqE 'KPACK_SETUP_DATA types=(.*,)?0x6b70616b' "$log"; then
        die "the kernel has no kpack run report in setup_data ($(grep -ao -m1 'KPACK_SETUP_DATA types=[^[:cntrl:]]*' "$log")); see $log"
    fi
    if [[ $cell == secureboot ]]; then
        # boot_params.secure_boot as the entry found it (the kernel's lockdown and IMA act on it).
        grep -aq 'secureboot: Secure boot enabled' "$log" \
            || die "the kernel did not report 'secureboot: Secure boot enabled' (boot_params.secure_boot); see $log"
        echo "efi-boot: the kernel reports: Secure boot enabled"
    fi
fi
rm -rf "$work"   # ESPs are tens of MB; kept only for post-mortems
echo "efi-boot: PASS: $cell $kind"
