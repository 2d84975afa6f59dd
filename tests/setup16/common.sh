# common.sh — sourced by the setup16 test scripts: the fixtures boot.fetch and setup16.fetch left in
# BUILD_DIR/boot, and what the scripts share.
#
# setup16_fixture BUILD_DIR sets:
#   boot_dir   BUILD_DIR/boot
#   out        BUILD_DIR/boot/setup16 (every file a test writes is named after the test)
#   vmlinuz, initrd              the 6.1 cloud kernel and the test initramfs (boot.fetch)
#   generic, generic_initrd      Debian's generic build of that kernel and the initramfs with its
#                                edd.ko (setup16.fetch, prepare.sh)
#   disk_args                    QEMU args for the 64 MiB IDE disk with MBR signature 0x4b41504b
#                                (BIOS drive 0x80 for EDD); snapshot=on, so concurrent QEMUs can
#                                share it and nothing writes to it
setup16_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
boot_sh=$setup16_here/../boot/boot.sh
loader_boot=$setup16_here/../loaders/loader-boot.sh
source "$setup16_here/../boot/fixture.sh"

setup16_fixture() {
    boot_dir=$1/boot
    out=$boot_dir/setup16
    boot_fixture "$boot_dir"
    local pathfile=$out/kernel-generic.path
    [[ -s $pathfile && -s $out/disk.img ]] ||
        { echo "$(basename "$0"): $out is incomplete; run the setup16.fetch test first" >&2; exit 1; }
    generic=$(cat "$pathfile")
    generic_initrd=$out/initramfs-generic.cpio.gz
    disk_args=(-drive "file=$out/disk.img,format=raw,if=ide,snapshot=on")
}

# image_path KPACK KIND [KERNEL] — the image to boot for KIND: stock is KERNEL itself (default the
# cloud kernel), a codec the kpack image of it. Images of the cloud kernel are the loader matrix's
# (BUILD_DIR/boot/loaders/kpack-KIND.bzImage, shared); those of the generic kernel live in
# $out/generic.
image_path() {
    local kpack=$1 kind=$2 kernel=${3:-$vmlinuz} dir=$boot_dir/loaders
    [[ $kernel == "$vmlinuz" ]] || dir=$out/generic
    if [[ $kind == stock ]]; then echo "$kernel"; else packed_image "$kpack" "$kind" "$kernel" "$dir"; fi
}
