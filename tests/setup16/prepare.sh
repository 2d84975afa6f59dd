#!/usr/bin/env bash
# prepare.sh BUILD_DIR — fixture of the setup16 tests (ctest: setup16.fetch), after boot.fetch.
#
# Writes into BUILD_DIR/boot/setup16:
#   disk.img             64 MiB raw disk for EDD to find as BIOS drive 0x80: an MBR with the
#                        signature "KPAK" (0x4b41504b) at 0x1b8 and 55 aa, whose code is `int 18h`
#                        (a BIOS that boots it goes on to the next device); the rest is zeros
#   kernel-generic.path  Debian's generic build of the 6.1 cloud kernel (same ABI number,
#                        scripts/fetch-kernel.sh --generic, cached in ~/.cache/kpack): it has vesafb
#   initramfs-generic.cpio.gz  boot.fetch's initramfs plus /edd.ko of that kernel (CONFIG_EDD=m
#                        there; tests/boot/init.c loads it), as a second concatenated cpio archive
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
dir=$1/boot/setup16
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=$1/boot/initramfs.cpio.gz
[[ -s $base ]] || { echo "prepare: $base missing; run boot.fetch first" >&2; exit 1; }
mkdir -p "$dir"

disk=$dir/disk.img
rm -f "$disk.tmp"
truncate -s 64M "$disk.tmp"
printf '\xcd\x18\xf4\xeb\xfd' | dd of="$disk.tmp" conv=notrunc status=none          # int 18h; hlt; jmp $-1
printf 'KPAK' | dd of="$disk.tmp" bs=1 seek=440 conv=notrunc status=none             # disk signature
printf '\x55\xaa' | dd of="$disk.tmp" bs=1 seek=510 conv=notrunc status=none
mv "$disk.tmp" "$disk"

vmlinuz=$("$repo/scripts/fetch-kernel.sh" --generic)
echo "$vmlinuz" > "$dir/kernel-generic.path.tmp"
mv "$dir/kernel-generic.path.tmp" "$dir/kernel-generic.path"
echo "prepare: generic kernel = $vmlinuz"

# The module tree sits next to boot/ in the extracted package.
release=${vmlinuz##*/vmlinuz-}
edd=$(dirname "$(dirname "$vmlinuz")")/lib/modules/$release/kernel/drivers/firmware/edd.ko
[[ -s $edd ]] || { echo "prepare: no $edd" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$edd" "$work/edd.ko"
chmod 0644 "$work/edd.ko"
touch -d @0 "$work/edd.ko"
(cd "$work" && echo edd.ko | cpio --quiet -o -H newc --owner=0:0 --reproducible) | gzip -9 -n > "$work/edd.cpio.gz"
cat "$base" "$work/edd.cpio.gz" > "$dir/initramfs-generic.cpio.gz.tmp"
mv "$dir/initramfs-generic.cpio.gz.tmp" "$dir/initramfs-generic.cpio.gz"
echo "prepare: wrote $dir/initramfs-generic.cpio.gz"
