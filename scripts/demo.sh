#!/usr/bin/env bash
# demo.sh [CODEC] — the quick start: install what is missing, build kpack, fetch a real Debian
# cloud kernel, pack it (default codec unless CODEC is given: raw, gzip, lz4, zstd, xz), boot it under
# QEMU and show what the stub and the kernel printed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
codec=${1:-lz4}

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target kpack
kpack=build/packer/kpack

out=build/demo
mkdir -p "$out"
echo "== fetching the Debian cloud kernel (cached in ${KPACK_CACHE:-$HOME/.cache/kpack})"
vmlinuz=$(scripts/fetch-kernel.sh)
scripts/make-initramfs.sh "$out/initramfs.cpio.gz" >/dev/null

echo "== kpack extract $vmlinuz"
$kpack extract "$vmlinuz" -o "$out/vmlinux" --relocs "$out/relocs"
echo "== kpack --$codec vmlinux --relocs relocs -o $out/bzImage"
$kpack "--$codec" "$out/vmlinux" --relocs "$out/relocs" -o "$out/bzImage"
ls -l "$vmlinuz" "$out/bzImage"
$kpack info "$out/bzImage"

echo "== booting $out/bzImage under QEMU (TCG) with kpack.debug"
log=$out/serial.log
KPACK_APPEND=kpack.debug tests/boot/boot.sh --log "$log" "$out/bzImage" "$out/initramfs.cpio.gz"
echo "== what the stub printed, and the kernel's first and /init's lines:"
grep -a -E '^kpack:|Linux version|KPACK_INIT_OK|KPACK_KASLR' "$log"
