#!/usr/bin/env bash
# prepare.sh OUTDIR [TAG [VERSION_GLOB [FLAVOUR]]] — fixture for the boot tests (ctest: boot.fetch).
#
# Fetches a real Debian kernel (scripts/fetch-kernel.sh VERSION_GLOB FLAVOUR), records its vmlinuz path in
# OUTDIR/kernel-TAG.path for the tests to read, and builds OUTDIR/initramfs.cpio.gz.
# TAG defaults to 6.1 (the kernel linux-image-cloud-amd64 points at; VERSION_GLOB empty).
set -euo pipefail

[[ $# -ge 1 && $# -le 4 ]] || { echo "usage: $0 OUTDIR [TAG [VERSION_GLOB [FLAVOUR]]]" >&2; exit 2; }
out=$1 tag=${2:-6.1} glob=${3:-} flavour=${4:-cloud-amd64}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

mkdir -p "$out"
vmlinuz=$("$repo/scripts/fetch-kernel.sh" "$glob" "$flavour")
# Write-then-rename: a test started by a concurrent ctest never sees a half-written path.
echo "$vmlinuz" > "$out/kernel-$tag.path.tmp"
mv "$out/kernel-$tag.path.tmp" "$out/kernel-$tag.path"
echo "prepare: kernel $tag = $vmlinuz"

"$repo/scripts/make-initramfs.sh" "$out/initramfs.cpio.gz"
