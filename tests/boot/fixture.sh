# fixture.sh — sourced by the boot-test scripts: the kernel and initramfs that boot.fetch
# (prepare.sh) left in BUILD_DIR/boot. Sets $vmlinuz and $initrd, or exits with a message.
# Usage: boot_fixture BOOT_DIR [TAG]   (TAG defaults to 6.1)
boot_fixture() {
    local dir=$1 tag=${2:-6.1}
    local pathfile=$dir/kernel-$tag.path
    [[ -s $pathfile ]] || { echo "$(basename "$0"): $pathfile missing; run the boot.fetch test first" >&2; exit 1; }
    vmlinuz=$(cat "$pathfile")
    initrd=$dir/initramfs.cpio.gz
    [[ -s $initrd ]] || { echo "$(basename "$0"): $initrd missing; run the boot.fetch test first" >&2; exit 1; }
}
