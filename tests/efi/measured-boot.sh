#!/usr/bin/env bash
# measured-boot.sh KPACK_BINARY CHECK IMAGE BUILD_DIR — boot the stock Debian 6.1 bzImage and the
# kpack IMAGE (raw, gzip, lz4, zstd, xz) of it the same way under OVMF, and compare what the two
# kernels report (tests/boot/init.c prints it). CHECK is one of:
#   tpm        QEMU -kernel/-initrd (OVMF hands the initrd over through LoadFile2) with a software
#              TPM 2.0 (swtpm, fresh for each boot): PCR 9, where the EFI stub measures the
#              LoadOptions and the initrd, equal to stock's and not zero; the firmware's event log
#              exposed by the kernel (binary_bios_measurements) in both, with the same EV_EVENT_TAG
#              entries (PCR, digests, tag and description) in the same order
#   tpm-systemd-boot  the same through systemd-boot from an ESP (a Boot Loader Specification entry):
#              the image started through LoadImage, the initrd through systemd-boot's LoadFile2
#   utf8       -append with non-ASCII text ("été", which OVMF widens byte by byte into UTF-16):
#              /proc/cmdline byte-identical to stock's
# kpack.debug is on both command lines (the stock kernel ignores it), so the kpack boot can be
# required to have gone through its EFI entry. Logs go to BUILD_DIR/boot/efi/measured; exit 77
# (skip) when swtpm or OVMF is missing.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK_BINARY CHECK IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 check=$2 kind=$3 boot_dir=$4/boot
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
boot_sh=$here/../boot/boot.sh
out=$boot_dir/efi/measured
mkdir -p "$out"

source "$here/../boot/fixture.sh"
boot_fixture "$boot_dir"

skip() { echo "measured-boot: SKIP: $*" >&2; exit 77; }
die() { echo "measured-boot: FAIL: $*" >&2; exit 1; }

ovmf=/usr/share/qemu/OVMF.fd
[[ -r $ovmf ]] || skip "$ovmf not installed"
sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
case $check in
    tpm|tpm-systemd-boot)
        command -v swtpm >/dev/null || skip "swtpm not installed"
        append="kpack.debug kpack.measured"
        if [[ $check == tpm-systemd-boot ]]; then
            [[ -r $sdboot ]] || skip "$sdboot not installed"
            for t in mkfs.vfat mmd mcopy; do command -v $t >/dev/null || skip "$t not installed"; done
        fi ;;
    utf8) append="kpack.debug kpack.cmdlinehex kpack.probe=été" ;;
    *) echo "measured-boot: unknown check '$check'" >&2; exit 2 ;;
esac
case $kind in
    raw|gzip|lz4|zstd|xz) image=$(packed_image "$kpack" "$kind" "$vmlinuz" "$boot_dir/loaders") ;;
    *) echo "measured-boot: unknown image '$kind'" >&2; exit 2 ;;
esac

work=$(mktemp -d)
tpm_pid=
cleanup() {
    [[ -z $tpm_pid ]] || kill "$tpm_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A TPM that has never run: its state in a directory of its own, its socket for QEMU; it ends with
# QEMU's connection (--terminate) or at the latest with this script.
start_tpm() {
    local dir=$work/tpm-$1
    mkdir -p "$dir"
    swtpm socket --tpm2 --tpmstate "dir=$dir" --ctrl "type=unixio,path=$dir/sock" --terminate \
        --log "file=$dir/swtpm.log" &
    tpm_pid=$!
    for _ in $(seq 50); do [[ -S $dir/sock ]] && break; sleep 0.1; done
    [[ -S $dir/sock ]] || die "swtpm did not open $dir/sock"
    tpm_args=(-chardev "socket,id=chrtpm,path=$dir/sock" -tpmdev emulator,id=tpm0,chardev=chrtpm
              -device tpm-tis,tpmdev=tpm0)
}

# esp WHO IMAGE: a FAT32 ESP (no partition table: OVMF takes the whole disk) with systemd-boot as
# the default boot program and one entry for IMAGE, $work/esp-WHO.img: booted from there instead of
# QEMU -kernel ($boot_options, $disk_args).
esp() {
    local img=$work/esp-$1.img
    printf 'timeout 0\ndefault kpack.conf\n' > "$work/loader.conf"
    printf 'title kpack\nlinux /linux.efi\ninitrd /initrd.img\noptions console=ttyS0 panic=-1 %s\n' "$append" \
        > "$work/kpack.conf"
    mkfs.vfat -C -F 32 -n KPACKESP "$img" $(( ($(stat -c %s "$2") / 1048576 + 48) * 1024 )) >/dev/null
    mmd -i "$img" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries
    mcopy -i "$img" "$sdboot" ::/EFI/BOOT/BOOTX64.EFI
    mcopy -i "$img" "$2" ::/linux.efi
    mcopy -i "$img" "$initrd" ::/initrd.img
    mcopy -i "$img" "$work/loader.conf" ::/loader/loader.conf
    mcopy -i "$img" "$work/kpack.conf" ::/loader/entries/kpack.conf
    boot_options=(--no-kernel) disk_args=(-drive "file=$img,format=raw,if=virtio")
}

# boot WHO IMAGE: one OVMF boot, its serial log (what /init reported) into $log.
boot() {
    local who=$1 img=$2
    log=$out/$check-$kind.$who.serial.log
    tpm_args=() boot_options=() disk_args=()
    [[ $check != tpm* ]] || start_tpm "$who"
    [[ $check != tpm-systemd-boot ]] || esp "$who" "$img"
    KPACK_APPEND=$append "$boot_sh" --timeout "${KPACK_EFI_TIMEOUT:-120}" --log "$log" "${boot_options[@]}" \
        "$img" "$initrd" -bios "$ovmf" "${tpm_args[@]}" "${disk_args[@]}" >&2 \
        || die "the $who image did not reach /init; see $log"
    if [[ -n $tpm_pid ]]; then kill "$tpm_pid" 2>/dev/null || true; wait "$tpm_pid" 2>/dev/null || true; tpm_pid=; fi
}
reported() { grep -aoE "^$1[^[:cntrl:]]*" "$2" || true; }

boot stock "$vmlinuz"; stock_log=$log
boot "$kind" "$image"; kpack_log=$log
grep -aqE $'kpack: efi entry\r?$' "$kpack_log" || die "the kpack image did not run through its EFI entry; see $kpack_log"

case $check in
    tpm|tpm-systemd-boot)
        stock_pcr=$(reported KPACK_PCR9= "$stock_log") kpack_pcr=$(reported KPACK_PCR9= "$kpack_log")
        [[ $stock_pcr =~ ^KPACK_PCR9=[0-9A-F]{64}$ ]] || die "no PCR 9 from the stock kernel ('$stock_pcr'); see $stock_log"
        [[ ! $stock_pcr =~ ^KPACK_PCR9=0+$ ]] || die "the stock kernel's PCR 9 is zero: nothing was measured; see $stock_log"
        [[ $kpack_pcr == "$stock_pcr" ]] || die "PCR 9: kpack ${kpack_pcr#*=}, stock ${stock_pcr#*=}"
        kpack_bytes=$(reported 'KPACK_EVENT_LOG bytes=' "$kpack_log")
        (( ${kpack_bytes#*=} > 0 )) || die "the kpack kernel has no event log ('$kpack_bytes'); see $kpack_log"
        stock_tags=$(reported KPACK_EVENT_TAG "$stock_log") kpack_tags=$(reported KPACK_EVENT_TAG "$kpack_log")
        (( $(wc -l <<< "$stock_tags") >= 2 )) || die "the stock log has fewer than 2 EV_EVENT_TAG entries; see $stock_log"
        [[ $kpack_tags == "$stock_tags" ]] \
            || die "EV_EVENT_TAG entries differ: $(diff <(echo "$stock_tags") <(echo "$kpack_tags") | head -20)"
        stock_bytes=$(reported 'KPACK_EVENT_LOG bytes=' "$stock_log")
        echo "measured-boot: PCR 9 ${kpack_pcr#*=} as stock's; event log ${kpack_bytes#*=} bytes" \
             "(stock ${stock_bytes#*=}), $(wc -l <<< "$kpack_tags") EV_EVENT_TAG entries as stock's" ;;
    utf8)
        stock_line=$(reported KPACK_CMDLINE_HEX= "$stock_log") kpack_line=$(reported KPACK_CMDLINE_HEX= "$kpack_log")
        [[ $stock_line =~ ^KPACK_CMDLINE_HEX=[0-9a-f]+$ ]] || die "no command line from the stock kernel; see $stock_log"
        [[ $kpack_line == "$stock_line" ]] || die "/proc/cmdline differs: kpack ${kpack_line#*=}, stock ${stock_line#*=}"
        echo "measured-boot: /proc/cmdline as stock's: ${kpack_line#*=}" ;;
esac
echo "measured-boot: PASS: $check $kind"
