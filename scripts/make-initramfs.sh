#!/usr/bin/env bash
# make-initramfs.sh OUT.cpio.gz — build the boot-test initramfs: a static /init (tests/boot/init.c)
# plus empty /dev, /proc and /sys.
#
# No device nodes are needed (init mounts devtmpfs), so this runs without root. The output is
# byte-for-byte reproducible for a given compiler: fixed mtimes, owners, modes and member order.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 OUT.cpio.gz" >&2; exit 2; }
out=$1
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/boot/init.c

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/dev "$root"/proc "$root"/sys

# -Wl,--build-id=none keeps the binary independent of anything but the code itself.
"${CC:-gcc}" -static -O2 -Wall -Wextra -Wl,--build-id=none -o "$root/init" "$src"
strip "$root/init"

# Normalise what cpio records; the umask and the clock of the build machine must not leak in.
chmod 0755 "$root/init" "$root"/dev "$root"/proc "$root"/sys
find "$root" -exec touch -h -d @0 {} +

# Sorted member list under the C locale so the archive order is stable. --reproducible also
# zeroes inode and device numbers, which differ from one checkout to another.
(cd "$root" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort \
    | cpio --quiet -o -H newc --owner=0:0 --reproducible) > "$work/initramfs.cpio"

# -n: do not store the name and mtime of the input file in the gzip header.
mkdir -p "$(dirname "$out")"
# A temporary name of this run's own: the boot fixtures for other kernels build the same file
# concurrently (same bytes), and each renames only what it wrote.
gzip -9 -n -c "$work/initramfs.cpio" > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "make-initramfs: wrote $out ($(stat -c %s "$out") bytes)" >&2
