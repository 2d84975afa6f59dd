#!/usr/bin/env bash
# make-image.sh [--key] [--suite SUITE] bios|uefi|secure — a small Debian system on a disk image that boots
# through its own boot loader, for tests/debian/run.sh: Debian 12 (bookworm) unless SUITE names
# another release (trixie: Debian 13). Prints the directory that holds it:
#
#   disk.img   bios: an MBR disk; GRUB's boot.img in the MBR, its core.img in the gap before the
#              first partition (sectors 1-2047), one ext4 partition from 1 MiB holding the root
#              (GRUB's modules in /boot/grub, a first grub.cfg; update-grub writes the real one at
#              the first boot). uefi: a GPT disk; an ESP (FAT, mounted at /boot/efi) with
#              systemd-boot as the removable-media loader EFI/BOOT/BOOTX64.EFI and one loader
#              entry in the layout kernel-install uses (ENTRY-TOKEN/VERSION/linux, initrd), then
#              the ext4 root; systemd-boot's package is installed, /etc/kernel/install.conf says
#              layout=bls (`bootctl install` is for the first boot, with the ESP mounted).
#              secure: the same GPT disk for Secure Boot the way Debian boots it: Debian's signed
#              shim as EFI/BOOT/BOOTX64.EFI, beside it Debian's signed GRUB and MokManager (what
#              the firmware finds on a disk it has no boot entry for), and EFI/debian/grub.cfg as
#              grub-install writes it (find the root, read its /boot/grub/grub.cfg); a first
#              /boot/grub/grub.cfg; shim-signed, grub-efi-amd64-signed, mokutil, efibootmgr and
#              sbsigntool installed (`grub-install --uefi-secure-boot` is for the first boot)
#   image.env  VARIANT, KERNEL_VERSION (what linux-image-cloud-amd64 installed), ROOT_UUID,
#              MACHINE_ID, BUILD_SECONDS, SIZE_BYTES (data in disk.img), PACKAGES
#
# No loop device, no mount, no chroot: mmdebstrap builds the root in a directory from this
# machine's Debian apt sources (the archives `apt-cache policy` lists with origin Debian), a
# customize hook (outside the root) writes the few files a booted system needs, mke2fs -d makes
# the root file system from the directory and mkfs.vfat and mcopy the ESP, sfdisk partitions the
# disk file, and dd puts everything in place. GRUB's core.img needs no patching at sector 1: its
# first sector (diskboot.img) already lists the rest, and boot.img loads sector 1 by default.
#
# The system's kpack-test-agent.service runs at each boot: on the second serial port (ttyS1, away
# from systemd's status lines on the console) it prints which kernel booted (uname -r), whether
# kpack's run report is in setup_data (read from sysfs, so it works with kpack removed too) and the
# command line, then runs step.sh from the tar archive on the second disk (/dev/vdb), if there is
# one, and powers off.
#
# Cached in ${KPACK_CACHE:-$HOME/.cache/kpack}/debian-image/VARIANT-KEY/, KEY a hash of the
# variant, its package list, the apt sources, every file the build puts into the image and the
# variant's layout version below (bump it when the way the disk is made changes); built once under
# a lock and reused until one of them changes. --key prints VARIANT-KEY only.
set -euo pipefail

print_key= suite=bookworm
[[ ${1:-} == --key ]] && { print_key=1; shift; }
[[ ${1:-} == --suite && $# -ge 2 ]] && { suite=$2; shift 2; }
[[ $# -eq 1 && ( $1 == bios || $1 == uefi || $1 == secure ) ]] \
    || { echo "usage: $0 [--key] [--suite SUITE] bios|uefi|secure" >&2; exit 2; }
variant=$1
cache=${KPACK_CACHE:-$HOME/.cache/kpack}/debian-image
say() { echo "make-image ($variant): $*" >&2; }
die() { say "$*"; exit 1; }

packages=(systemd-sysv udev kmod e2fsprogs initramfs-tools linux-image-cloud-amd64)
case $variant in
    bios) packages+=(grub-pc-bin grub2-common) layout=1 ;;
    uefi) packages+=(systemd-boot systemd-boot-efi dosfstools) layout=1 ;;
    secure) packages+=(shim-signed grub-efi-amd64-signed grub-efi-amd64-bin grub2-common mokutil efibootmgr
                       dosfstools sbsigntool openssl) layout=1 ;;
esac
# Fixed identities: the key must not depend on a random draw, and the tests read them back.
number=$(case $variant in bios) echo 1 ;; uefi) echo 2 ;; secure) echo 3 ;; esac)
root_uuid=6b70616b-0000-4000-8000-0000000000$(printf %02d "$number")
esp_id=6B70AC01
machine_id=6b70616b64656269616e0000000$number

# This machine's Debian archive entries, one-line form, as apt resolved them (third-party sources
# are left out: the image is Debian's, and CI may not reach them); for another release, its main
# suite from the same archive.
sources=$(apt-cache policy | awk '
    /^ *[0-9]+ [a-z+]+:\/\// { uri = $2; split($3, sc, "/"); suite = sc[1]; comp = sc[2]; next }
    /release .*o=Debian,/ && uri != "" { print "deb " uri " " suite " " comp; uri = "" }' | sort -u)
[[ -n $sources ]] || die "apt-cache policy lists no Debian archive (run apt-get update)"
if [[ $suite != bookworm ]]; then
    archive=$(awk '$3 == "bookworm" { print $2; exit }' <<< "$sources")
    [[ -n $archive ]] || die "apt-cache policy lists no bookworm archive to take $suite from"
    sources="deb $archive $suite main"
fi
name=$variant
[[ $suite == bookworm ]] || name=$variant-$suite

# ---- what goes into the root: generated here, hashed into the key -------------------------------

files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
cat > "$files/kpack-test-agent" <<'EOF'
#!/bin/sh
# kpack-test-agent — tests/debian/run.sh's eyes in the guest, on the second serial port: which
# kernel booted, whether kpack's stub left its run report (setup_data type 0x6b70616b), the command
# line; then the step on /dev/vdb; then power off.
exec > /dev/ttyS1 2>&1
record=absent
for type in /sys/kernel/boot_params/setup_data/*/type; do
    [ -r "$type" ] && [ "$(cat "$type")" = 0x6b70616b ] && record=present
done
echo "KPACK-TEST: booted version=$(uname -r) record=$record"
echo "KPACK-TEST: cmdline $(cat /proc/cmdline)"
if [ -b /dev/vdb ]; then
    mkdir -p /run/kpack-test
    if tar -xf /dev/vdb -C /run/kpack-test; then
        echo "KPACK-TEST: step begin"
        (cd /run/kpack-test && sh -eu ./step.sh)
        echo "KPACK-TEST: step end status=$?"
    else
        echo "KPACK-TEST: step end status=tar"
    fi
fi
echo "KPACK-TEST: powering off"
systemctl --no-block poweroff
EOF
cat > "$files/kpack-test-agent.service" <<'EOF'
[Unit]
Description=kpack test agent (tests/debian): report the boot, run the step on /dev/vdb, power off
After=multi-user.target kpack-trial.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/kpack-test-agent

[Install]
WantedBy=default.target
EOF
# The customize hook runs outside the root: "$1" is the root directory, "$2" where to note the
# kernel's version; the agent's files are next to the hook.
cat > "$files/customize.sh" <<EOF
#!/bin/sh
set -eu
root=\$1
files=\$(dirname "\$0")
version=\$(ls "\$root"/boot/vmlinuz-* | sed 's,.*/vmlinuz-,,' | sort -V | tail -n1)
[ -n "\$version" ] || { echo "customize: no kernel in \$root/boot" >&2; exit 1; }
echo "\$version" > "\$2"
echo kpack-debian > "\$root/etc/hostname"
echo $machine_id > "\$root/etc/machine-id"
printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' $root_uuid > "\$root/etc/fstab"
# Log in nowhere: the agent is the only user.
ln -sf /dev/null "\$root/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "\$root/etc/systemd/system/getty@tty1.service"
install -m 0755 "\$files/kpack-test-agent" "\$root/usr/local/sbin/kpack-test-agent"
install -m 0644 "\$files/kpack-test-agent.service" "\$root/etc/systemd/system/kpack-test-agent.service"
mkdir -p "\$root/etc/systemd/system/default.target.wants"
ln -sf ../kpack-test-agent.service "\$root/etc/systemd/system/default.target.wants/kpack-test-agent.service"
EOF
if [[ $variant != bios ]]; then
    cat >> "$files/customize.sh" <<EOF
printf 'UUID=%s /boot/efi vfat umask=0077 0 2\n' $(echo $esp_id | sed 's/\(....\)\(....\)/\1-\2/') >> "\$root/etc/fstab"
EOF
fi
if [[ $variant != uefi ]]; then
    cat >> "$files/customize.sh" <<EOF
# GRUB as grub-pc would leave it (its postinst copies this file; grub-install copies the modules),
# on the serial console, with no timeout to wait out.
sed -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=0/' \\
    -e 's/^GRUB_CMDLINE_LINUX_DEFAULT=.*/GRUB_CMDLINE_LINUX_DEFAULT=""/' \\
    -e 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0,115200"/' \\
    "\$root/usr/share/grub/default/grub" > "\$root/etc/default/grub"
printf '%s\n' 'GRUB_TERMINAL=serial' 'GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"' \\
    'GRUB_DISABLE_OS_PROBER=true' >> "\$root/etc/default/grub"
mkdir -p "\$root/boot/grub"
$([[ $variant == bios ]] && echo 'cp -r "$root/usr/lib/grub/i386-pc" "$root/boot/grub/"')
grub-editenv "\$root/boot/grub/grubenv" create
# The first boot's menu, until update-grub writes the real one.
cat > "\$root/boot/grub/grub.cfg" <<CFG
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
menuentry 'Debian GNU/Linux (first boot)' {
    linux /boot/vmlinuz-\$version root=UUID=$root_uuid ro console=ttyS0,115200
    initrd /boot/initrd.img-\$version
}
CFG
EOF
fi
if [[ $variant == uefi ]]; then
    cat >> "$files/customize.sh" <<EOF
# kernel-install: entries in the Boot Loader Specification's layout, this command line.
echo layout=bls > "\$root/etc/kernel/install.conf"
echo "root=UUID=$root_uuid ro console=ttyS0,115200" > "\$root/etc/kernel/cmdline"
# The ESP's content (copied into the FAT image): systemd-boot where the firmware looks on a
# removable disk, and the first boot's entry as kernel-install would write it.
esp=\$root/boot/efi
mkdir -p "\$esp/EFI/BOOT" "\$esp/EFI/systemd" "\$esp/loader/entries" "\$esp/$machine_id/\$version"
cp "\$root/usr/lib/systemd/boot/efi/systemd-bootx64.efi" "\$esp/EFI/BOOT/BOOTX64.EFI"
cp "\$root/usr/lib/systemd/boot/efi/systemd-bootx64.efi" "\$esp/EFI/systemd/systemd-bootx64.efi"
printf 'timeout 0\nconsole-mode keep\n' > "\$esp/loader/loader.conf"
cp "\$root/boot/vmlinuz-\$version" "\$esp/$machine_id/\$version/linux"
cp "\$root/boot/initrd.img-\$version" "\$esp/$machine_id/\$version/initrd.img-\$version"
cat > "\$esp/loader/entries/$machine_id-\$version.conf" <<ENTRY
title      Debian GNU/Linux 12 (bookworm)
version    \$version
machine-id $machine_id
sort-key   debian
options    root=UUID=$root_uuid ro console=ttyS0,115200 systemd.machine_id=$machine_id
linux      /$machine_id/\$version/linux
initrd     /$machine_id/\$version/initrd.img-\$version
ENTRY
EOF
elif [[ $variant == secure ]]; then
    cat >> "$files/customize.sh" <<EOF
# The ESP as Debian's installer leaves a removable disk: shim where the firmware looks, GRUB and
# MokManager beside it (shim starts them from its own directory), and the small grub.cfg that
# grub-install puts beside its signed GRUB, whose built-in prefix is /EFI/debian.
esp=\$root/boot/efi
mkdir -p "\$esp/EFI/BOOT" "\$esp/EFI/debian"
cp "\$root/usr/lib/shim/shimx64.efi.signed" "\$esp/EFI/BOOT/BOOTX64.EFI"
cp "\$root/usr/lib/shim/mmx64.efi.signed" "\$esp/EFI/BOOT/mmx64.efi"
cp "\$root/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "\$esp/EFI/BOOT/grubx64.efi"
cat > "\$esp/EFI/debian/grub.cfg" <<CFG
search.fs_uuid $root_uuid root
set prefix=(\\\$root)'/boot/grub'
configfile \\\$prefix/grub.cfg
CFG
EOF
fi
chmod +x "$files/customize.sh"

key=$( { echo "$variant layout $layout"; printf '%s\n' "${packages[@]}" "$sources"; cat "$files"/*; } \
      | sha256sum | cut -c1-16)
[[ -n $print_key ]] && { echo "$name-$key"; exit 0; }
dir=$cache/$name-$key
mkdir -p "$cache"
exec 9> "$cache/$name-$key.lock"
flock 9
if [[ -s $dir/disk.img && -s $dir/image.env ]]; then
    say "cached: $dir ($(sed -n 's/^BUILD_SECONDS=//p' "$dir/image.env") s to build)"
    echo "$dir"
    exit 0
fi

tools=(mmdebstrap mke2fs sfdisk)
[[ $variant == bios ]] && tools+=(grub-mkimage grub-editenv) || tools+=(mkfs.vfat mcopy)
[[ $variant == secure ]] && tools+=(grub-editenv)
for tool in "${tools[@]}"; do
    command -v "$tool" > /dev/null || die "$tool is not installed (scripts/install-deps.sh)"
done
[[ $(id -u) -eq 0 ]] || die "mmdebstrap needs root here (its root mode)"

start=$EPOCHSECONDS
work=$cache/$name-$key.tmp
rm -rf "$work"
mkdir -p "$work"
rootfs=$work/rootfs
cp "$files"/* "$work/"

# ---- the disk (a change here wants the variant's layout version bumped) -------------------------

say "mmdebstrap: ${packages[*]}"
mapfile -t mirrors <<< "$sources"
mmdebstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
    --aptopt='Acquire::Languages "none"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook="$work/customize.sh \"\$1\" $work/kernel-version" \
    "$suite" "$rootfs" "${mirrors[@]}" > "$work/mmdebstrap.log" 2>&1 \
    || { tail -n 20 "$work/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $work/mmdebstrap.log)"; }
version=$(cat "$work/kernel-version")
rm -f "$rootfs/var/cache/apt/archives/"*.deb

disk=$work/disk.img
root_mib=2048
if [[ $variant == bios ]]; then
    root_start_mib=1
    truncate -s $(( (root_start_mib + root_mib) * 1048576 )) "$disk"
    echo 'start=2048, type=83, bootable' | sfdisk --quiet --label dos "$disk" || die "sfdisk $disk failed"
else
    esp_mib=256 root_start_mib=258
    truncate -s $(( (root_start_mib + root_mib + 1) * 1048576 )) "$disk"
    printf '%s\n' "start=2048, size=$((esp_mib * 2048)), type=U, name=ESP" \
        "start=$((root_start_mib * 2048)), size=$((root_mib * 2048)), type=L, name=root" \
        | sfdisk --quiet --label gpt "$disk" || die "sfdisk $disk failed"
    mkfs.vfat -F 32 -n ESP -i "$esp_id" -C "$work/esp.vfat" $((esp_mib * 1024)) > /dev/null || die "mkfs.vfat failed"
    mcopy -s -i "$work/esp.vfat" "$rootfs/boot/efi/"* ::/ || die "mcopy into the ESP failed"
    dd if="$work/esp.vfat" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
    rm -rf "$work/esp.vfat" "$rootfs/boot/efi/"*
fi
mke2fs -q -F -t ext4 -d "$rootfs" -U "$root_uuid" -L kpack-debian -m 0 "$work/root.ext4" ${root_mib}M \
    > /dev/null || die "mke2fs -d $rootfs failed"
dd if="$work/root.ext4" of="$disk" bs=1M seek=$root_start_mib conv=notrunc,sparse status=none
rm -f "$work/root.ext4"

if [[ $variant == bios ]]; then
    grubdir=$rootfs/usr/lib/grub/i386-pc
    grub-mkimage -O i386-pc -d "$grubdir" -o "$work/core.img" -p '(hd0,msdos1)/boot/grub' \
        biosdisk part_msdos ext2 || die "grub-mkimage failed"
    core_size=$(stat -c %s "$work/core.img")
    (( core_size <= 2047 * 512 )) || die "$work/core.img: $core_size bytes do not fit the gap before the partition"
    dd if="$work/core.img" of="$disk" bs=512 seek=1 conv=notrunc status=none
    dd if="$grubdir/boot.img" of="$disk" bs=440 count=1 conv=notrunc status=none
    rm -f "$work/core.img"
fi
rm -rf "$rootfs"

seconds=$((EPOCHSECONDS - start))
{
    echo "VARIANT=$variant"
    echo "SUITE=$suite"
    echo "KERNEL_VERSION=$version"
    echo "ROOT_UUID=$root_uuid"
    echo "MACHINE_ID=$machine_id"
    echo "BUILD_SECONDS=$seconds"
    echo "SIZE_BYTES=$(( $(stat -c %b "$disk") * 512 ))"
    echo "PACKAGES='${packages[*]}'"
} > "$work/image.env"
rm -rf "$dir"
mv "$work" "$dir"
say "built $dir/disk.img in $seconds s (kernel $version, $(( $(stat -c %b "$dir/disk.img") / 2048 )) MiB of data)"
echo "$dir"
