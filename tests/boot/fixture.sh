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

# The kernel the loader, SMP and EFI scripts boot: the tag in KPACK_KERNEL_TAG (tests/kernels.txt),
# 6.1 when it is unset; and where they keep that kernel's images and logs: BOOT_DIR/loaders for
# 6.1, BOOT_DIR/loaders/TAG for the others, so that kernels never share an image.
kernel_tag() { echo "${KPACK_KERNEL_TAG:-6.1}"; }
loader_dir() {
    local tag
    tag=$(kernel_tag)
    if [[ $tag == 6.1 ]]; then echo "$1/loaders"; else echo "$1/loaders/$tag"; fi
}

# packed_image KPACK KIND VMLINUZ OUTDIR — print the path of OUTDIR/kpack-KIND.bzImage (KIND a
# codec: raw, gzip, lz4, zstd, xz, or raw-compact: --raw --layout compact), `kpack --KIND VMLINUZ`
# straight from the stock bzImage, or for KIND elf-CODEC of OUTDIR/kpack-elf-CODEC.elf,
# `kpack --elf --CODEC VMLINUZ`. One image per kind and directory, shared by every test that asks:
# built under a lock and rebuilt only when kpack or the stock image is newer, so a fixed packer is
# never masked by a stale image.
packed_image() {
    local kpack=$1 kind=$2 src=$3 out=$4
    local img=$out/kpack-$kind.bzImage flags
    read -r -a flags <<<"$(kpack_args "$kind")"
    if [[ $kind == elf-* ]]; then
        img=$out/kpack-$kind.elf flags=(--elf "--${kind#elf-}")
    fi
    mkdir -p "$out"
    (
        flock 9
        if [[ ! ( -s $img && $img -nt $kpack && $img -nt $src ) ]]; then
            "$kpack" "${flags[@]}" "$src" -o "$img.tmp" >&2
            mv "$img.tmp" "$img"
        fi
    ) 9> "$out/kpack-$kind.lock"
    echo "$img"
}

# kpack_args KIND — the packing options for an image kind: --CODEC, for raw-compact --raw --layout
# compact (raw alone is the default layout, in-place), for default none at all.
kpack_args() {
    case $1 in
        raw-compact) echo "--raw --layout compact" ;;
        default) echo "" ;;
        *) echo "--$1" ;;
    esac
}
