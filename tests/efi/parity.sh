#!/usr/bin/env bash
# parity.sh KPACK BP_DIFF PATH IMAGE BUILD_DIR — ctest efi.parity.PATH.IMAGE: does a kpack image
# hand the kernel the same boot_params under UEFI as the stock image booted the same way?
#
# PATH is one of:
#   kernel        OVMF -kernel (tests/efi/efi-boot.sh): stock runs its EFI stub, kpack its PE entry
#   systemd-boot  systemd-boot's LoadImage/StartImage, initrd through LoadFile2 (efi-boot.sh)
#   grub-efi      GRUB x86_64-efi `linux` (tests/loaders/loader-boot.sh): GRUB's i386 loader fills
#                 boot_params (efi_info, its e820 from the EFI map) and enters both images at the
#                 boot protocol, so kpack's legacy entry runs under UEFI firmware
# Both boots use the same firmware file (OVMF.fd, its variables in RAM), command line, initrd and
# memory, with `kpack.bootparams` so /init dumps /sys/kernel/boot_params/data. boot_params_diff
# then compares the two pages field by field, allowing only what parity-allow.txt lists for every
# path or for PATH (each line with its reason); the whole diff is printed either way. IMAGE
# `stock` compares stock with itself: the plumbing, which must find no difference but the ones
# the firmware varies from boot to boot (the same allowlist applies).
# Then the setup_data chains: the types each kernel lists (KPACK_SETUP_DATA), kpack's run report
# (0x6b70616b) aside, must be stock's in order. Under the EFI stubs (kernel, systemd-boot) stock's
# must hold a SETUP_PCI node (0x3): QEMU's default VGA has an option ROM, which both stubs copy.
# Those nodes' bytes (IDs, location and ROM; init's length and FNV-1a of each) must be stock's too.
# Exit: 0 pass, 1 a boot failed or a field outside the allowlist differs, 77 skip (tool missing).
set -euo pipefail

[[ $# -eq 5 ]] || { echo "usage: $0 KPACK BP_DIFF PATH IMAGE BUILD_DIR" >&2; exit 2; }
kpack=$1 bpdiff=$2 path=$3 kind=$4 build=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# boot KIND A|B: the log of one boot, named apart from the matrix's (the tags).
boot() {
    local tag=.parity-$kind-$2 status=0 log
    case $path in
        kernel|systemd-boot)
            KPACK_EFI_TAG=$tag KPACK_EFI_WORDS=kpack.bootparams \
                "$here/efi-boot.sh" "$kpack" "$path" "$1" "$build" >&2 || status=$?
            log=$build/boot/efi/$path-$1$tag.serial.log ;;
        grub-efi)
            KPACK_LOADER_TAG=$tag KPACK_APPEND=kpack.bootparams \
                "$here/../loaders/loader-boot.sh" "$kpack" grub-efi "$1" "$build" >&2 || status=$?
            log=$build/boot/loaders/grub-efi-$1$tag.serial.log ;;
        *) echo "parity: unknown path '$path'" >&2; exit 2 ;;
    esac
    if [[ $status -eq 77 ]]; then exit 77; fi
    [[ $status -eq 0 ]] || { echo "parity: FAIL: the $1 image did not boot through $path" >&2; exit 1; }
    echo "$log"
}
log_a=$(boot stock A)
log_b=$(boot "$kind" B)

source "$here/../lib/parity_verdict.sh"
status=0
parity_verdict "$bpdiff" "$log_a" "$log_b" "$here/parity-allow.txt" "$path" "$kind" || status=$?

types_a=$(setup_data_types "$log_a") && types_b=$(setup_data_types "$log_b") || exit 1
if [[ $path != grub-efi && ,$types_a, != *,0x3,* ]]; then
    echo "parity: FAIL: $path: stock's setup_data has no SETUP_PCI node (types: ${types_a:-none}); the test needs a device with an option ROM" >&2
    status=1
elif [[ $types_a != "$types_b" ]]; then
    echo "parity: FAIL: $path: setup_data types differ: stock ${types_a:-none}, $kind ${types_b:-none} (run report aside)" >&2
    status=1
else
    echo "parity: PASS: $path: setup_data types ${types_a:-none} in both (run report aside)"
fi

# pci_rom_sums LOG: each SETUP_PCI node's data (IDs, location, the ROM) as LENGTH:FNV-1a, in order.
pci_rom_sums() {
    local sums
    sums=$(sed -n 's/^KPACK_SETUP_DATA sums=\([^[:space:]]*\).*/\1/p' "$1" | tail -n 1)
    [[ -n $sums ]] || { echo "parity: FAIL: no KPACK_SETUP_DATA sums line in $1" >&2; return 1; }
    tr ',' '\n' <<<"$sums" | sed -n 's/^0x3://p' | paste -sd, || true
}
roms_a=$(pci_rom_sums "$log_a") && roms_b=$(pci_rom_sums "$log_b") || exit 1
if [[ $roms_a != "$roms_b" ]]; then
    echo "parity: FAIL: $path: SETUP_PCI nodes differ (length:FNV-1a): stock ${roms_a:-none}, $kind ${roms_b:-none}" >&2
    status=1
else
    echo "parity: PASS: $path: SETUP_PCI nodes byte for byte (length:FNV-1a) ${roms_a:-none} in both"
fi
exit $status
