#!/usr/bin/env bash
# prepare.sh OUTDIR [TAG [FETCH ARGS...]] — fixture for the boot tests (ctest: boot.fetch, kernels.fetch.*).
#
# Fetches a real Debian kernel (scripts/fetch-kernel.sh FETCH ARGS: [--suite SUITE [--refresh]]
# [VERSION_GLOB [FLAVOUR]]), records its vmlinuz path in OUTDIR/kernel-TAG.path for the tests to
# read, and builds OUTDIR/initramfs.cpio.gz.
# TAG defaults to 6.1 (the kernel linux-image-cloud-amd64 points at; no FETCH ARGS).
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 OUTDIR [TAG [FETCH ARGS...]]" >&2; exit 2; }
out=$1 tag=${2:-6.1}
shift $(( $# >= 2 ? 2 : 1 ))
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

mkdir -p "$out"
vmlinuz=$("$repo/scripts/fetch-kernel.sh" "$@")
# Write-then-rename: a test started by a concurrent ctest never sees a half-written path.
echo "$vmlinuz" > "$out/kernel-$tag.path.tmp"
mv "$out/kernel-$tag.path.tmp" "$out/kernel-$tag.path"
echo "prepare: kernel $tag = $vmlinuz"

# Every fixture writes the same initramfs: under a lock, by rename, and only when it is older than
# its sources, so that concurrent fixtures and the tests already booting never see half of it.
initramfs=$out/initramfs.cpio.gz
(
    flock 9
    [[ -s $initramfs && $initramfs -nt $repo/tests/boot/init.c && $initramfs -nt $repo/scripts/make-initramfs.sh ]] || {
        "$repo/scripts/make-initramfs.sh" "$initramfs.tmp"
        mv "$initramfs.tmp" "$initramfs"
    }
) 9> "$out/initramfs.lock"
