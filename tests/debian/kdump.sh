# kdump.sh — sourced by tests/debian/run.sh for the kdump sequences: Debian's kdump-tools with a
# kpack image as the crash kernel, on the bios image (GRUB, grub.sh) and on the secure image
# (shim.sh: Secure Boot, the kernel locked down). Step 0 installs kdump-tools beside kpack
# (kdump_install_lines, then kdump_installed); then kdump_crash boots the packed kernel, which loads
# itself as the crash kernel into Debian's default crashkernel= reservation, and crashes it with
# sysrq-c: the crash kernel (the same kpack image, kexec'd into the reserved region: by kexec-tools'
# bzImage loader, or under lockdown by the kernel's own through kexec_file_load, which checks its
# signature first) boots, kdump-tools saves the dump to /var/crash and resets the machine, and the
# boot after it finds the dump.

# Debian's default reservation (kdump-tools' /etc/default/grub.d/kdump-tools.cfg) and its size.
case $suite in
    bookworm) crash_reservation=384M-:128M ;;
    *) crash_reservation=512M-:192M ;;
esac
crash_bytes=$(( $(tr -d M <<< "${crash_reservation##*:}") * 1048576 ))

# kdump_install_lines DIR: puts kdump-tools, makedumpfile (which it recommends: without it the dump
# is a copy of all of /proc/vmcore) and what they need beyond the image's packages into DIR/debs
# (downloaded here: the guest has no network) and prints the step lines that install them.
# What the image lacks is what apt says against the image's own dpkg status, read from its root
# file system (the disk's last partition) without mounting it; from the image's suite: this
# machine's apt for Debian 12, the suite's private lists (scripts/fetch-kernel.sh) for another.
kdump_install_lines() {
    local dir=$1 status=$work/image-dpkg-status root_sector options apt_suite=()
    root_sector=$(sfdisk -d "$work/disk.img" | sed -n 's/.*start= *\([0-9]*\),.*/\1/p' | tail -n1)
    debugfs -R 'cat /var/lib/dpkg/status' "$work/disk.img?offset=$((root_sector * 512))" > "$status" 2> /dev/null
    grep -q '^Package: linux-image-' "$status" || fail "$work/disk.img: no dpkg status read from its root file system"
    if [[ $suite != bookworm ]]; then
        options=$("$here/../../scripts/fetch-kernel.sh" --suite "$suite" --apt-options) \
            || fail "cannot read $suite's package lists (scripts/fetch-kernel.sh)"
        mapfile -t apt_suite <<< "$options"
    fi
    mkdir -p "$dir/debs/partial"
    apt-get -q "${apt_suite[@]}" -o Dir::State::status="$status" -o Dir::Cache::archives="$dir/debs" -o Debug::NoLocking=1 \
        --download-only --no-install-recommends -y install kdump-tools makedumpfile > "$work/kdump-download.log" 2>&1 \
        || { tail -n 20 "$work/kdump-download.log" >&2; fail "apt-get could not download kdump-tools (log: $work/kdump-download.log)"; }
    rm -rf "$dir/debs/partial" "$dir/debs/lock"
    say "kdump-tools and what it needs: $(cd "$dir/debs" && ls | sed 's/_.*//' | tr '\n' ' ')" >&2
    # In the crash kernel, kdump-tools-dump.service is the only unit (systemd.unit= on its command
    # line); its drop-in says on the agent's port which kernel that was and whether kpack's stub
    # booted it, before kdump-tools saves the dump.
    cat > "$dir/crash-report" <<'EOF'
#!/bin/sh
[ -s /proc/vmcore ] || exit 0
record=absent
for type in /sys/kernel/boot_params/setup_data/*/type; do
    [ -r "$type" ] && [ "$(cat "$type")" = 0x6b70616b ] && record=present
done
echo "KPACK-TEST: crash kernel version=$(uname -r) record=$record memory=$(sed -n 's/^MemTotal: *//p' /proc/meminfo)" > /dev/ttyS1
echo "KPACK-TEST: crash kernel cmdline $(cat /proc/cmdline)" > /dev/ttyS1
EOF
    cat <<EOF
install -m 0755 crash-report /usr/local/sbin/kpack-test-crash-report
mkdir -p /etc/systemd/system/kdump-tools-dump.service.d
printf '[Service]\nExecStartPre=-/usr/local/sbin/kpack-test-crash-report\n' > /etc/systemd/system/kdump-tools-dump.service.d/kpack-test.conf
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ./debs/*.deb
# The kdump initrd and /var/lib/kdump's links for the kernel already installed (the kernel hook
# kdump-tools ships runs for kernels installed after it).
kdump-config symlinks $version
ls /var/lib/kdump | sed 's/^/kdump dir: /'
grep -o 'crashkernel=[^ ]*' /boot/grub/grub.cfg | sort -u | sed 's/^/grub.cfg: /'
EOF
}

# kdump_installed: what step 0's kdump lines printed.
kdump_installed() {
    expect_output "^kdump dir: initrd\\.img-$version_re$"
    expect_output "^kdump dir: vmlinuz$"
    expect_output "^grub.cfg: crashkernel=$crash_reservation$"
}

# kdump_crash NAME TRUST MORE: boot NAME, the packed kernel's trial: kdump-tools loaded it as the
# crash kernel; the step says so, runs the lines MORE, and crashes the kernel. The crash kernel
# boots and saves the dump; the boot after it (packed, the trial passed) finds it. TRUST is what
# `kpack-kernel-hook status` says of the image's signature, if anything ("signed by ...; ").
kdump_crash() {
    local name=$1 trust=$2 more=$3 dir crash
    dir=$(step_dir "$name")
    cat > "$dir/step.sh" <<EOF
if ls /var/crash/2*/dump.* > /dev/null 2>&1; then
    ls /var/crash/2*/ | sed 's/^/dump: /'
    grep -ah 'sysrq: Trigger a crash' /var/crash/2*/dmesg.* | head -n1 | sed 's/^/dmesg: /'
    $report_step
    exit 0
fi
echo "crash loaded: \$(cat /sys/kernel/kexec_crash_loaded), \$(cat /sys/kernel/kexec_crash_size) bytes"
echo "crash kernel: \$(readlink -f /var/lib/kdump/vmlinuz)"
kdump-config status | sed 's/^/kdump: /'
$more
$report_step
sync
echo c > /proc/sysrq-trigger
EOF
    boot "$name" 1800
    crash=$(grep -a '^KPACK-TEST: crash kernel version=' "$log" | tail -n1 | tr -d '\r')
    [[ -n $crash ]] || { tail -n 40 "$console" >&2; fail "$(basename "$log"): no crash kernel reported (did it boot?)"; }
    say "$crash"
    [[ $crash == "KPACK-TEST: crash kernel version=$version record=present "* ]] \
        || fail "$(basename "$log"): the crash kernel was not kernel $version booted by kpack's stub: ${crash#KPACK-TEST: }"
    expect_output "^crash loaded: 1, $crash_bytes bytes$"
    expect_output "^crash kernel: /boot/vmlinuz-$version_re$"
    expect_output "^kdump: current state *: *ready to kdump"
    expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); ${trust}trial: passed; default: packed$"
    # The boot after the dump: the packed kernel, by default, and the dump it finds.
    expect_boot "$version" present "/boot/vmlinuz-$version" default
    expect_step_ok
    expect_output "^dump: dump\\.[0-9]{12}$"
    expect_output "^dmesg: .*sysrq: Trigger a crash"
}
