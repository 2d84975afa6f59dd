#!/usr/bin/env bash
# matrix-table.sh BUILD_DIR [JUNIT.xml] — the loader × image matrix as a Markdown table, from the
# results of the last ctest run in BUILD_DIR (Testing/Temporary/LastTest.log) or from a JUnit file
# written by `ctest -L boot --output-junit FILE` (relative paths are taken from BUILD_DIR, as
# ctest does).
#
# Rows are loaders, columns the stock bzImage (control) and the kpack codecs. The SeaBIOS -kernel
# row comes from tests/boot (boot.stock, boot.kpack.CODEC); the others from tests/loaders
# (loaders.LOADER.IMAGE). A cell is "pass (N s)" (the whole test: the first test of a codec also
# packs its image), "**FAIL**", "skip" (tool missing here) or "—"
# (not run in that ctest invocation: run `ctest -L boot` to fill the whole table).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/matrix_results.sh"

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 BUILD_DIR [JUNIT.xml]" >&2; exit 2; }
load_results boot "$1" "${2:-}"

images=(stock raw raw-compact gzip lz4 zstd xz)
# loader id|row label (the entry point a kpack image is entered at: checked by trapping the 16-bit
# or the 32-bit entry of an image and seeing which loaders still boot it)
rows=(
    "seabios|QEMU -kernel, SeaBIOS (16-bit entry)"
    "qboot|QEMU -kernel, qboot (16-bit)"
    "microvm|QEMU microvm, acpi=off (16-bit)"
    "ovmf|QEMU -kernel, OVMF (LoadImage: stock's EFI stub, kpack's PE entry)"
    "grub-linux|GRUB 2.06 BIOS \`linux\` (32-bit)"
    "grub-linux16|GRUB 2.06 BIOS \`linux16\` (16-bit)"
    "grub-efi|GRUB 2.06 UEFI \`linux\` (Secure Boot off: GRUB's i386 loader for both, 32-bit)"
    "isolinux|ISOLINUX 6.04 \`LINUX\` (16-bit)"
    "kexec|kexec -l, kexec_load (64-bit, via purgatory)"
    "kexec-file|kexec -s -l, kexec_file_load (64-bit, via purgatory)"
    "kexec-high|kexec -l in a 6 GiB guest: image above 4 GiB (64-bit)"
    "seabios-la57|SeaBIOS -kernel, \`-cpu max\`: 5-level paging as stock"
    "ovmf-la57|OVMF -kernel, \`-cpu max\`: 5-level paging as stock"
    "grub-linux-la57|GRUB BIOS \`linux\`, \`-cpu max\`: 5-level paging"
    "grub-efi-la57|GRUB UEFI \`linux\`, \`-cpu max\`: 5-level paging"
    "kexec-la57|kexec_load from a 5-level kernel (64-bit entry with LA57 on)"
    "kexec-file-la57|kexec_file_load from a 5-level kernel"
    "seabios-no5lvl|SeaBIOS -kernel, \`-cpu max\`, \`no5lvl\`: 4 levels"
    "ovmf-no5lvl|OVMF -kernel, \`-cpu max\`, \`no5lvl\`: 4 levels"
)

echo "| Loader | stock bzImage (control) | kpack raw (in-place) | kpack raw (compact) | kpack gzip | kpack lz4 | kpack zstd | kpack xz |"
echo "|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
    id=${row%%|*} label=${row#*|}
    line="| $label"
    for img in "${images[@]}"; do
        if [[ $id == seabios ]]; then
            test=boot.kpack.$img; [[ $img == stock ]] && test=boot.stock
        else
            test=loaders.$id.$img
        fi
        line+=" | $(result_cell "$test")"
    done
    echo "$line |"
done
