#!/usr/bin/env bash
# install-deps.sh — install the Debian packages kpack needs to build and test, if any are missing.
# Idempotent and quiet when everything is present, so scripts/test.sh can call it every time.
set -euo pipefail

pkgs=(
    build-essential cmake                              # host tools and the stub (gcc, ld, make)
    clang-format                                       # scripts/check-format.sh: the one C++ style, checked in CI
    zlib1g-dev liblz4-dev liblzma-dev libzstd-dev      # codecs (the stub links the static archives)
    libxxhash-dev                                      # the frames' XXH3 digest (static archive too)
    doctest-dev                                        # unit tests
    qemu-system-x86 cpio gzip                          # boot tests: QEMU, initramfs
    ovmf grub-common grub-pc-bin grub-efi-amd64-bin    # loader matrix (tests/loaders): UEFI, GRUB
    xorriso mtools isolinux syslinux-common            #   ISOs: grub-mkrescue, ISOLINUX
    kexec-tools busybox-static                         #   kexec from a first-stage initramfs
    systemd-boot-efi sbsigntool dosfstools openssl     # EFI paths (tests/efi): systemd-boot, UKI stub, Secure Boot signing, ESPs
    swtpm swtpm-tools                                  # measured boot (tests/efi): a software TPM 2.0 for OVMF
    lz4 zstd xz-utils                                  # reference (de)compressors for tests
    clang libclang-rt-dev                              # libFuzzer targets (the runtime is only a Recommends)
    python3                                            # bad-input tests: malformed ELF generator
    debhelper lintian                                  # the Debian package (scripts/build-deb.sh) and its check
    bash-completion man-db systemd                     # install tests: completion loader, man -l, kernel-install
    grub2-common                                       #   trial boots (tests/install/trial.sh): grub-reboot, grub-editenv's caller
    mmdebstrap fdisk e2fsprogs                         # the Debian system image (tests/debian): root, partitions (sfdisk), mke2fs -d
    linux-source-6.1 bc flex bison libelf-dev libssl-dev  # relocs test: builds a tinyconfig kernel (tests/relocs)
)

# dpkg-query rather than a bare `dpkg -s`: the latter also succeeds for removed packages whose
# configuration files remain ("deinstall ok config-files").
missing=()
for p in "${pkgs[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true) == installed ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
# No recommends: the boot tests run QEMU with -nic none, so no iPXE option ROMs are needed.
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
