#!/usr/bin/env bash
# demo.sh [CODEC] — the quick start: install what is missing, build kpack, fetch a real Debian
# cloud kernel, pack its stock bzImage (default codec unless CODEC is given: raw, gzip, lz4, zstd,
# xz), boot it under QEMU on two CPUs and show what the stub and the kernel printed. Packing the
# bzImage itself, not a vmlinux extracted from it, keeps what only its header says (5-level paging,
# in xloadflags) and carries its relocation table over; -v says so.
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

echo "== kpack -v --$codec $vmlinuz -o $out/bzImage"
$kpack -v "--$codec" "$vmlinuz" -o "$out/bzImage"
ls -l "$vmlinuz" "$out/bzImage"
$kpack info "$out/bzImage"

# Two CPUs, so that the stub's helper decodes frames too: its "frames: N, M by helpers" line.
echo "== booting $out/bzImage under QEMU (TCG, -smp 2) with kpack.debug"
log=$out/serial.log
KPACK_APPEND=kpack.debug tests/boot/boot.sh --log "$log" "$out/bzImage" "$out/initramfs.cpio.gz" -smp 2
echo "== what the stub printed, and the kernel's first and /init's lines:"
grep -a -E '^kpack:|Linux version|KPACK_INIT_OK|KPACK_KASLR' "$log"
