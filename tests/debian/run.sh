#!/usr/bin/env bash
# run.sh LOADER SEQUENCE BUILD_DIR DEB_DIR [SUITE] — a real Debian system (tests/debian/make-image.sh:
# Debian 12, or SUITE, e.g. trixie for Debian 13)
# booted again and again in QEMU through its own boot loader (no -kernel), with the kpack package
# that scripts/build-deb.sh builds installed inside it, and KPACK_HOOK=yes.
#
#   LOADER    grub: the bios image (GRUB in its MBR, SeaBIOS), update-grub, GRUB's trial entry
#             (tests/debian/grub.sh); systemd-boot: the uefi image under OVMF (its variables kept
#             across boots as NVRAM is), kernel-install with /etc/kernel/tries, boot counting and
#             systemd-bless-boot (tests/debian/systemd-boot.sh); shim: the secure image under
#             OVMF with Microsoft's keys and Secure Boot enforced, Debian's signed shim and GRUB,
#             the signing key enrolled through mokutil and MokManager (tests/debian/shim.sh)
#   SEQUENCE  trial: 0 kpack installed and the hook on; 1 the trial boot of the packed kernel
#             reaches userspace and `kpack stats` shows the record; 2 the next boot is packed by
#             default, and one byte of its payload is damaged; 3 that image's trial fails in the
#             stub and the boot after it is stock, unattended
#             full: trial, then 4 `apt-get install` of a second kernel version (on Debian 12 its
#             6.12; on Debian 13 the newest of trixie-backports, in the packaging of 6.19 and later:
#             linux-binary, linux-run-hooks) packs it and arms its trial; 5 its trial boot passes, and `apt-get purge kpack` puts every stock
#             kernel back; 6 the machine boots stock
#             enrol (shim only): 0 grub-install --uefi-secure-boot, kpack installed: the hook
#             refuses the key the machine does not trust and keeps the stock kernel; mokutil
#             --import; 1 MokManager enrols the key, typed at the console; the hook packs and
#             signs; 2 the packed kernel's trial boot, through shim, with the kernel locked down
#             untrusted (shim only): 0 as enrol's, but no enrolment and KPACK_SIGN_UNTRUSTED=yes:
#             packed, signed, on trial; 1 shim refuses the image, the trial entry boots the
#             stock kernel instead, unattended, the trial is failed
#             kdump (grub): 0 as above, with Debian's kdump-tools installed; 1 the packed
#             kernel's trial boot loads it as the crash kernel and crashes; the crash kernel (the
#             kpack image, kexec'd into crashkernel=384M-:128M) saves the dump and resets; the
#             boot after finds the dump (tests/debian/kdump.sh)
#             kdump (shim): enrol's 0 and 1, kdump-tools installed at 0; 2 the trial boot, locked
#             down: kdump-tools loads the signed packed kernel with kexec_file_load, the same
#             image unsigned is refused; the crash, the dump and the boot after as grub's
#             revoked (shim): enrol's, and mokutil --delete at 2; 3 MokManager deletes the key,
#             shim refuses the packed default, its entry boots stock, the trial fails
#
# Every assertion is on what the agent reports: the kernel version, the run report present or
# absent, the entry the boot loader booted (BOOT_IMAGE and kpack.trial on the command line, or
# systemd-boot's LoaderEntrySelected), what `kpack-kernel-hook status`, GRUB's environment and the
# loader entries say, never on a log line alone. Timings of the image (cached) and of each boot
# are printed. Needs root (mmdebstrap), QEMU, OVMF for systemd-boot, the .deb in DEB_DIR, and for
# `full` the 6.12 kernel package (boot.fetch.6.12).
set -euo pipefail

usage="usage: $0 grub|systemd-boot trial|full BUILD_DIR DEB_DIR [SUITE], grub kdump BUILD_DIR DEB_DIR, or shim enrol|untrusted|kdump|revoked BUILD_DIR DEB_DIR [SUITE]"
[[ $# -eq 4 || $# -eq 5 ]] || { echo "$usage" >&2; exit 2; }
loader=$1 sequence=$2 build=$(realpath "$3") deb_dir=$(realpath "$4") suite=${5:-bookworm}
case $loader in
    grub) variant=bios ;;
    systemd-boot) variant=uefi ;;
    shim) variant=secure ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
case $loader/$sequence in
    grub/trial | grub/full | grub/kdump | systemd-boot/trial | systemd-boot/full | shim/enrol | shim/untrusted | shim/kdump | shim/revoked) ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "run.sh ($loader $sequence $suite): FAIL: $*" >&2; exit 1; }
say() { echo "run.sh ($loader $sequence $suite): $*"; }
command -v qemu-system-x86_64 > /dev/null || { echo "run.sh: SKIP: qemu-system-x86_64 not installed" >&2; exit 77; }

deb=$(ls "$deb_dir"/kpack_*_amd64.deb 2> /dev/null | head -n1)
[[ -n $deb ]] || fail "no kpack_*_amd64.deb in $deb_dir (package.build)"

started=$EPOCHSECONDS
image_dir=$("$here/make-image.sh" --suite "$suite" $variant)
# shellcheck disable=SC1091
source "$image_dir/image.env"
say "image: $image_dir/disk.img, kernel $KERNEL_VERSION, built in $BUILD_SECONDS s, $((SIZE_BYTES / 1048576)) MiB of data ($((EPOCHSECONDS - started)) s to get it now)"
version=$KERNEL_VERSION
# The same in a regular expression: Debian 13's versions hold a + (6.12.117+deb13-...).
version_re=$(printf '%s' "$version" | sed 's/[.+]/\\&/g')
stock=/boot/kpack/stock

work=$build/debian/$loader-$sequence
[[ $suite == bookworm ]] || work=$work-$suite
rm -rf "$work"
mkdir -p "$work"
cp --sparse=always "$image_dir/disk.img" "$work/disk.img"
firmware=()
if [[ $loader == systemd-boot ]]; then
    # OVMF with a variable store of this run's own, kept across its boots as NVRAM is.
    cp /usr/share/OVMF/OVMF_VARS_4M.fd "$work/OVMF_VARS.fd"
    firmware=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd"
              -drive "if=pflash,format=raw,unit=1,file=$work/OVMF_VARS.fd")
elif [[ $loader == shim ]]; then
    # OVMF as a machine is sold: Microsoft's keys enrolled, Secure Boot on, its variables writable
    # only from SMM (so the OS cannot change them behind the firmware's back).
    cp /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$work/OVMF_VARS.fd"
    firmware=(-machine q35,smm=on -global driver=cfi.pflash01,property=secure,value=on
              -drive "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.ms.fd"
              -drive "if=pflash,format=raw,unit=1,file=$work/OVMF_VARS.fd")
fi

source "$here/harness.sh"
[[ $sequence == kdump ]] && source "$here/kdump.sh"
source "$here/$loader.sh"

say "PASS ($((EPOCHSECONDS - started)) s)"
rm -f "$work/disk.img"
