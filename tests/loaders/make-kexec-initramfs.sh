#!/usr/bin/env bash
# make-kexec-initramfs.sh BASE.cpio IMAGE STAGE2_INITRD OUT.cpio — first-stage initramfs for the
# kexec tests.
#
# BASE.cpio (built once, under a lock, reused by every kexec test) holds busybox-static, kexec from
# kexec-tools with the shared libraries ldd names, and a shell /init that loads /image with
# /stage2.cpio.gz as its initrd and jumps to it. `kpack_kexec_flags=-s` on the first kernel's
# command line selects kexec_file_load; `kpack_crash_words=` loads it as a crash kernel (kexec -p)
# and panics. OUT.cpio is BASE.cpio followed by a second archive with
# IMAGE and STAGE2_INITRD: the kernel unpacks concatenated archives in turn, so only that small
# part is written per test. Uncompressed on purpose: unpacking is faster than gunzip under TCG.
# Exit 77 when busybox or kexec is missing.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 BASE.cpio IMAGE STAGE2_INITRD OUT.cpio" >&2; exit 2; }
base=$1 image=$2 stage2=$3 out=$4

busybox=$(command -v busybox || true)
kexec=$(command -v kexec || echo /usr/sbin/kexec)
[[ -x $busybox && -x $kexec ]] || { echo "make-kexec-initramfs: busybox or kexec missing" >&2; exit 77; }
# A dynamically linked busybox would need its libraries too; busybox-static's does not.
if ldd "$busybox" >/dev/null 2>&1; then
    echo "make-kexec-initramfs: $busybox is not static (install busybox-static)" >&2; exit 77
fi

# Fixed owners and a sorted member list, as in scripts/make-initramfs.sh. (No mtime reset here:
# the per-test part holds hard links to the shared image, whose mtime the tests compare.)
pack() {  # pack DIR > archive
    (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
        cpio --quiet -o -H newc --owner=0:0 --reproducible)
}

build_base() {
    local root
    root=$(mktemp -d)
    mkdir -p "$root"/{bin,dev,proc,sys,tmp}
    cp "$busybox" "$root/bin/busybox"
    cp "$kexec" "$root/bin/kexec"
    # kexec-tools links libc and (on Debian) the Xen libraries: copy each to the same path.
    ldd "$kexec" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r lib; do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
    cat > "$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
flags=$(sed -n 's/.*kpack_kexec_flags=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "kpack-kexec: kexec $flags -l /image"
# kpack.debug: the stub reports where the kexec loader put it and where the kernel went. Other
# kpack.* words of this command line (the tests' requests, e.g. kpack.cpuonline) go along.
words=$(tr ' ' '\n' < /proc/cmdline | grep '^kpack\.' | grep -v '^kpack\.debug$' | tr '\n' ' ')
# kpack_crash_words=A,B (tests/loaders/loader-boot.sh's kdump): load /image as the crash kernel
# with the words A B (nr_cpus=1, disable_cpu_apicid=0, ...), then panic on the last CPU, so the
# crash kernel starts there, as a dump after a panic on an AP does, with CPU 0 stopped.
if grep -q 'kpack_crash_words=' /proc/cmdline; then
    crash=$(sed -n 's/.*kpack_crash_words=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
    last=$(($(nproc) - 1))
    echo "kpack-kexec: kexec $flags -p /image, words: $crash; panic on CPU $last"
    if kexec $flags -p /image --initrd=/stage2.cpio.gz --append="console=ttyS0 panic=-1 kpack.debug $crash"; then
        echo 1 > /proc/sys/kernel/sysrq
        taskset -c "$last" sh -c 'echo c > /proc/sysrq-trigger'
    fi
elif kexec $flags -l /image --initrd=/stage2.cpio.gz --append="console=ttyS0 panic=-1 kpack.debug $words"; then
    echo "kpack-kexec: loaded; kexec -e"
    kexec -e
fi
echo "kpack-kexec: FAILED"
poweroff -f
EOF
    chmod 0755 "$root/init"
    find "$root" -exec touch -h -d @0 {} +
    pack "$root" > "$base.tmp"
    rm -rf "$root"
    mv "$base.tmp" "$base"
}

(
    flock 9
    if [[ ! ( -s $base && $base -nt ${BASH_SOURCE[0]} && $base -nt $kexec ) ]]; then
        build_base
    fi
) 9> "$base.lock"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln "$image" "$work/image" 2>/dev/null || cp "$image" "$work/image"
ln "$stage2" "$work/stage2.cpio.gz" 2>/dev/null || cp "$stage2" "$work/stage2.cpio.gz"
{ cat "$base"; pack "$work"; } > "$out.tmp"
mv "$out.tmp" "$out"
