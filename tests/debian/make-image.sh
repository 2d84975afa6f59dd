#!/usr/bin/env bash
# make-image.sh [--print-key] — a small Debian 12 system on a BIOS disk image, booted by its own GRUB
# (i386-pc), for tests/debian/run.sh. Prints the directory that holds it:
#
#   disk.img     raw disk: an MBR, GRUB's boot.img in it and its core.img in the gap before the
#                first partition (sectors 1-2047), one ext4 partition from 1 MiB holding the root
#   image.env    KERNEL_VERSION (the kernel linux-image-cloud-amd64 installed), ROOT_UUID,
#                BUILD_SECONDS (how long the build took), SIZE_BYTES (data in disk.img), PACKAGES
#
# No loop device, no mount, no chroot: mmdebstrap builds the root into a directory with this
# machine's Debian apt sources (the entries `apt-cache policy` lists with origin Debian), a
# customize hook writes the few files a booted system needs (fstab, /etc/default/grub, a first
# grub.cfg, GRUB's modules, the test agent below), mke2fs -d makes the file system from the
# directory, sfdisk partitions the disk file, and grub-mkimage's core.img (whose first sector
# already lists where the rest of it is) and boot.img (which loads sector 1 by default) go in with dd.
#
# The system runs kpack-test-agent.service at each boot: it prints on the serial console which
# kernel booted (uname -r), whether kpack's run record is in setup_data (read from sysfs, so it
# works with kpack removed too), the command line, then runs step.sh from the tar archive on the
# second disk (/dev/vdb), if there is one, and powers off.
#
# Cached in ${KPACK_CACHE:-$HOME/.cache/kpack}/debian-image/KEY/, KEY a hash of the package list,
# the apt sources and this script; built once under a lock, reused until one of them changes.
set -euo pipefail

cache=${KPACK_CACHE:-$HOME/.cache/kpack}/debian-image
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { echo "make-image: $*" >&2; }
die() { say "$*"; exit 1; }

packages=(systemd-sysv udev kmod e2fsprogs initramfs-tools linux-image-cloud-amd64 grub-pc-bin grub2-common)

# This machine's Debian archive entries, one-line form, as apt resolved them (third-party sources
# are left out: the image is Debian's, and CI may not reach them).
sources=$(apt-cache policy | awk '
    /^ *[0-9]+ [a-z+]+:\/\// { uri = $2; split($3, sc, "/"); suite = sc[1]; comp = sc[2]; next }
    /release .*o=Debian,/ && uri != "" { print "deb " uri " " suite " " comp; uri = "" }' | sort -u)
[[ -n $sources ]] || die "apt-cache policy lists no Debian archive (run apt-get update)"

key=$( { printf '%s\n' "${packages[@]}" "$sources"; cat "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)
[[ ${1:-} == --print-key ]] && { echo "$key"; exit 0; }
dir=$cache/$key
mkdir -p "$cache"
exec 9> "$cache/$key.lock"
flock 9
if [[ -s $dir/disk.img && -s $dir/image.env ]]; then
    say "cached: $dir ($(sed -n 's/^BUILD_SECONDS=//p' "$dir/image.env") s to build)"
    echo "$dir"
    exit 0
fi

for tool in mmdebstrap mke2fs sfdisk grub-mkimage; do
    command -v $tool > /dev/null || die "$tool is not installed (scripts/install-deps.sh)"
done
[[ $(id -u) -eq 0 ]] || die "mmdebstrap needs root here (its root mode; no user namespaces assumed)"

start=$EPOCHSECONDS
work=$cache/$key.tmp
rm -rf "$work"
mkdir -p "$work"
rootfs=$work/rootfs
uuid=$(cat /proc/sys/kernel/random/uuid)

# ---- files the customize hook puts into the root -----------------------------------------------

files=$work/files
mkdir -p "$files"
cat > "$files/kpack-test-agent" <<'EOF'
#!/bin/sh
# kpack-test-agent — tests/debian/run.sh's eyes in the guest: which kernel booted, whether kpack's
# stub left its run record (setup_data type 0x6b70616b), then the step on /dev/vdb, then power off.
exec > /dev/ttyS0 2>&1
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

# The hook runs outside the root (mmdebstrap's customize hook, "$1" the root directory).
cat > "$work/customize.sh" <<EOF
#!/bin/sh
set -eu
root=\$1
version=\$(ls "\$root"/boot/vmlinuz-* | sed 's,.*/vmlinuz-,,' | sort -V | tail -n1)
[ -n "\$version" ] || { echo "customize: no kernel in \$root/boot" >&2; exit 1; }
echo "\$version" > "$work/kernel-version"
echo kpack-debian > "\$root/etc/hostname"
printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$uuid" > "\$root/etc/fstab"
# Log in nowhere: the agent is the only user.
ln -sf /dev/null "\$root/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "\$root/etc/systemd/system/getty@tty1.service"
install -m 0755 "$files/kpack-test-agent" "\$root/usr/local/sbin/kpack-test-agent"
install -m 0644 "$files/kpack-test-agent.service" "\$root/etc/systemd/system/kpack-test-agent.service"
mkdir -p "\$root/etc/systemd/system/default.target.wants"
ln -sf ../kpack-test-agent.service "\$root/etc/systemd/system/default.target.wants/kpack-test-agent.service"
# GRUB as grub-pc would leave it (its postinst copies this file; grub-install copies the modules),
# on the serial console, with no timeout to wait out.
sed -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=0/' \
    -e 's/^GRUB_CMDLINE_LINUX_DEFAULT=.*/GRUB_CMDLINE_LINUX_DEFAULT=""/' \
    -e 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0,115200"/' \
    "\$root/usr/share/grub/default/grub" > "\$root/etc/default/grub"
printf '%s\n' 'GRUB_TERMINAL=serial' 'GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"' \
    'GRUB_DISABLE_OS_PROBER=true' >> "\$root/etc/default/grub"
mkdir -p "\$root/boot/grub"
cp -r "\$root/usr/lib/grub/i386-pc" "\$root/boot/grub/"
# The first boot's menu, until update-grub writes the real one there.
cat > "\$root/boot/grub/grub.cfg" <<CFG
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
menuentry 'Debian GNU/Linux (first boot)' {
    linux /boot/vmlinuz-\$version root=UUID=$uuid ro console=ttyS0,115200
    initrd /boot/initrd.img-\$version
}
CFG
EOF
chmod +x "$work/customize.sh"

# ---- the root, the file system, the disk ---------------------------------------------------------

say "mmdebstrap: ${packages[*]}"
mapfile -t mirrors <<< "$sources"
mmdebstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
    --aptopt='Acquire::Languages "none"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook="$work/customize.sh \"\$1\"" \
    bookworm "$rootfs" "${mirrors[@]}" > "$work/mmdebstrap.log" 2>&1 \
    || { tail -n 20 "$work/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $work/mmdebstrap.log)"; }
version=$(cat "$work/kernel-version")
rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*_Packages

fs_mib=2048
mke2fs -q -t ext4 -d "$rootfs" -U "$uuid" -L kpack-debian -m 0 "$work/root.ext4" ${fs_mib}M \
    || die "mke2fs -d $rootfs failed"
disk=$work/disk.img
truncate -s $(( (fs_mib + 1) * 1024 * 1024 )) "$disk"
echo 'start=2048, type=83, bootable' | sfdisk --quiet --label dos "$disk" || die "sfdisk $disk failed"
dd if="$work/root.ext4" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
rm -f "$work/root.ext4"

# GRUB: core.img finds its modules and grub.cfg in the partition (the prefix), and its first sector
# (diskboot.img) already lists the following ones, so at sector 1 it needs no patching; boot.img's
# code goes in the MBR before the partition table.
grubdir=$rootfs/usr/lib/grub/i386-pc
grub-mkimage -O i386-pc -d "$grubdir" -o "$work/core.img" -p '(hd0,msdos1)/boot/grub' \
    biosdisk part_msdos ext2 || die "grub-mkimage failed"
core_size=$(stat -c %s "$work/core.img")
(( core_size <= 2047 * 512 )) || die "$work/core.img: $core_size bytes do not fit the gap before the partition"
dd if="$work/core.img" of="$disk" bs=512 seek=1 conv=notrunc status=none
dd if="$grubdir/boot.img" of="$disk" bs=440 count=1 conv=notrunc status=none
rm -rf "$rootfs" "$work/files" "$work/core.img"

seconds=$((EPOCHSECONDS - start))
{
    echo "KERNEL_VERSION=$version"
    echo "ROOT_UUID=$uuid"
    echo "BUILD_SECONDS=$seconds"
    echo "SIZE_BYTES=$(( $(stat -c %b "$disk") * 512 ))"
    echo "PACKAGES='${packages[*]}'"
} > "$work/image.env"
rm -rf "$dir"
mv "$work" "$dir"
say "built $dir/disk.img in $seconds s (kernel $version, $(( $(stat -c %b "$dir/disk.img") / 2048 )) MiB of data)"
echo "$dir"
