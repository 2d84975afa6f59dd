# Sourced by the boot scripts of the loader and EFI matrices (tests/loaders/loader-boot.sh,
# tests/efi/efi-boot.sh) after tests/boot/fixture.sh's boot_fixture: what both do before booting.

script_name=$(basename "$0" .sh)

# A tool or firmware file missing here is a skip (exit 77), not a failure.
skip() { echo "$script_name: SKIP: $*" >&2; exit 77; }
need() { for t in "$@"; do command -v "$t" >/dev/null || skip "$t not installed"; done; }
need_file() { for f in "$@"; do [[ -r $f ]] || skip "$f not installed"; done; }

# matrix_image KPACK KIND DIR: the stock bzImage (the control) or its kpack image for codec KIND
# (elf-CODEC: kpack --elf; default: no option), packed once into DIR and shared by every test of that image
# (fixture.sh's packed_image).
matrix_image() {
    case $2 in
        stock) echo "$vmlinuz" ;;
        raw|raw-compact|gzip|lz4|zstd|xz|default|elf-raw|elf-gzip|elf-lz4|elf-zstd|elf-xz) packed_image "$1" "$2" "$vmlinuz" "$3" ;;
        *) echo "$script_name: unknown image '$2'" >&2; exit 2 ;;
    esac
}
