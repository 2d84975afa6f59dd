#!/usr/bin/env bash
# boot-kpack.sh KPACK_BINARY MODE BUILD_DIR [TAG] — build one image of the test kernel and boot it.
#
# Needs BUILD_DIR/boot/kernel-TAG.path and BUILD_DIR/boot/initramfs.cpio.gz (tests/boot/prepare.sh).
# MODE:
#   raw|gzip|lz4|zstd|xz  kpack --MODE on the vmlinux extracted from the stock image; raw (the
#                      default layout, in-place) must run where QEMU's 1 MiB load put it: kpack.debug's
#                      summary says "(in place)"
#   raw-compact        kpack --raw --layout compact: boots, and QEMU's 1 MiB load makes the stub move
#                      the kernel (no "(in place)"), as the compact layout only avoids at pref_address
#   repack-stock       kpack --lz4 straight from the stock bzImage (kpack extracts internally)
#   pvh                the extracted vmlinux booted as an ELF through its PVH note (no kpack image);
#                      the floor any bzImage can reach, and a check that extract gives a bootable ELF
#   stock              the stock bzImage itself (KPACK_BINARY is not used; pass -)
# TAG selects the kernel (default 6.1). Every file written is named after MODE and TAG, so tests
# can run concurrently: BUILD_DIR/boot/kpack-MODE.bzImage (kpack-MODE-TAG.bzImage for other
# kernels than 6.1), BUILD_DIR/boot/MODE-TAG.serial.log.
set -euo pipefail

[[ $# -ge 3 && $# -le 4 ]] || { echo "usage: $0 KPACK_BINARY MODE BUILD_DIR [TAG]" >&2; exit 2; }
kpack=$1 mode=$2 dir=$3/boot tag=${4:-6.1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

source "$here/fixture.sh"
boot_fixture "$dir" "$tag"
suffix=; [[ $tag == 6.1 ]] || suffix=-$tag
vmlinux=$dir/vmlinux-$tag
relocs=$dir/relocs-$tag

# The extracted vmlinux is shared by several tests: produce it once, under a lock, and redo it only
# when the stock image or kpack itself is newer (a fixed extract must not be masked by a stale file).
extract() (
    flock 9
    if [[ -s $vmlinux && -s $relocs && $vmlinux -nt $vmlinuz && $vmlinux -nt $kpack ]]; then
        exit 0
    fi
    echo "boot-kpack: $kpack extract $vmlinuz"
    "$kpack" extract "$vmlinuz" -o "$vmlinux.tmp" --relocs "$relocs.tmp"
    mv "$relocs.tmp" "$relocs"
    mv "$vmlinux.tmp" "$vmlinux"   # last, so its mtime vouches for both files
) 9> "$dir/extract-$tag.lock"      # a subshell: the lock is released before QEMU runs

case $mode in
    stock)
        image=$vmlinuz ;;
    pvh)
        extract
        image=$vmlinux ;;
    raw|raw-compact|gzip|lz4|zstd|xz)
        extract
        image=$dir/kpack-$mode$suffix.bzImage
        "$kpack" $(kpack_args "$mode") "$vmlinux" --relocs "$relocs" -o "$image" ;;
    repack-stock)
        image=$dir/kpack-repack-stock$suffix.bzImage
        "$kpack" --lz4 "$vmlinuz" -o "$image" ;;
    *)
        echo "boot-kpack: unknown mode '$mode'" >&2; exit 2 ;;
esac

# What was built, for whoever reads a failing test's output; not a pass/fail criterion here.
if [[ $mode != stock && $mode != pvh ]]; then
    "$kpack" info "$image" || echo "boot-kpack: (kpack info failed with status $?)" >&2
fi

# Every kpack image leaves its run report in setup_data.
[[ $mode == stock || $mode == pvh ]] || export KPACK_EXPECT_RUN_REPORT=1
log=$dir/$mode-$tag.serial.log
[[ $mode == raw* ]] || exec "$here/boot.sh" --log "$log" "$image" "$initrd"

# Raw: where the stub found the kernel, from kpack.debug's summary line.
KPACK_APPEND="${KPACK_APPEND:-} kpack.debug" "$here/boot.sh" --log "$log" "$image" "$initrd"
summary=$(grep -a -m1 -o 'kpack: raw image at [^[:cntrl:]]*' "$log" || true)
echo "boot-kpack: $summary"
[[ -n $summary ]] || { echo "boot-kpack: FAIL: no kpack.debug summary in $log" >&2; exit 1; }
if [[ $mode == raw && $summary != *"(in place)"* ]]; then
    echo "boot-kpack: FAIL: the default raw layout was moved, not run in place, under QEMU -kernel" >&2; exit 1
elif [[ $mode == raw-compact && $summary == *"(in place)"* ]]; then
    echo "boot-kpack: FAIL: the compact layout ran in place at QEMU's 1 MiB: not the compact layout" >&2; exit 1
fi
