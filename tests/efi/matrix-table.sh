#!/usr/bin/env bash
# matrix-table.sh BUILD_DIR [JUNIT.xml] — the EFI cell × image matrix as a Markdown table, from the
# results of the last ctest run in BUILD_DIR (Testing/Temporary/LastTest.log; run `ctest -L efi`
# first) or from a JUnit file written by `ctest --output-junit FILE`.
# A cell is "pass (N s)" (the whole test: the first test of a codec also packs its image),
# "**FAIL**", "skip" (tool or firmware missing here) or "—" (not registered or not run: the CI set
# has every cell for stock and lz4 only; -DKPACK_EFI_FULL_MATRIX=ON registers the rest).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/matrix_results.sh"

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 BUILD_DIR [JUNIT.xml]" >&2; exit 2; }
load_results efi "$1" "${2:-}"

rows=(
    "kernel|OVMF, QEMU -kernel (LoadImage; kpack: \`kpack: efi entry\` required)"
    "shell|OVMF UEFI shell, startup.nsh, \`initrd=\` on the command line"
    "systemd-boot|systemd-boot 252, BLS entry, initrd via LoadFile2"
    "uki|UKI (systemd-stub 252 + .linux/.initrd/.cmdline) as BOOTX64.EFI"
    "secureboot|Secure Boot (snakeoil), signed systemd-boot + signed image"
    "secureboot.unsigned|Secure Boot: unsigned image refused"
    "secureboot.tampered|Secure Boot: signed image, one payload byte flipped, refused"
    "grub|GRUB 2.06 x86_64-efi \`linux\` (Secure Boot off: GRUB's i386 loader)"
    "grub-linuxefi|GRUB 2.06 x86_64-efi \`linuxefi\` (EFI handover)"
)
echo "| EFI path | stock bzImage (control) | kpack raw | kpack gzip | kpack lz4 | kpack zstd | kpack xz |"
echo "|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
    id=${row%%|*} line="| ${row#*|}"
    for img in stock raw gzip lz4 zstd xz; do line+=" | $(result_cell "efi.$id.$img")"; done
    echo "$line |"
done
