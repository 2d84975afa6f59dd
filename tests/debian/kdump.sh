# kdump.sh — sourced by tests/debian/run.sh for the kdump sequence on the bios image (GRUB):
# Debian's kdump-tools with a kpack image as the crash kernel. grub.sh's step 0 installs kdump-tools
# beside kpack (kdump_install_lines); then kdump_sequence boots the packed kernel, which loads
# itself as the crash kernel into Debian's default crashkernel= reservation, and crashes it with
# sysrq-c: the crash kernel (the same kpack image, kexec'd by kexec-tools' bzImage loader into the
# reserved region) boots, kdump-tools saves the dump to /var/crash and resets the machine, and the
# boot after it finds the dump.

# kdump_install_lines DIR: puts kdump-tools, makedumpfile (which it recommends: without it the dump
# is a copy of all of /proc/vmcore) and what they need beyond the image's packages into DIR/debs
# (downloaded here: the guest has no network) and prints the step lines that install them.
# What the image lacks is what apt says against the image's own dpkg status, read from its root
# file system (the bios disk's one partition, at 1 MiB) without mounting it.
kdump_install_lines() {
    local dir=$1 status=$work/image-dpkg-status
    debugfs -R 'cat /var/lib/dpkg/status' "$work/disk.img?offset=1048576" > "$status" 2> /dev/null
    grep -q '^Package: linux-image-' "$status" || fail "$work/disk.img: no dpkg status read from its root file system"
    mkdir -p "$dir/debs/partial"
    apt-get -q -o Dir::State::status="$status" -o Dir::Cache::archives="$dir/debs" -o Debug::NoLocking=1 \
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

kdump_sequence() {
    expect_output "^kdump dir: initrd\\.img-$version_re$"
    expect_output "^kdump dir: vmlinuz$"
    expect_output "^grub.cfg: crashkernel=384M-:128M$"

    # ---- 1: the trial boot loads the packed kernel as the crash kernel and crashes; the crash
    # kernel saves the dump; the boot after it (packed, the trial passed) finds it --------------
    local dir
    dir=$(step_dir 1-kdump)
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
$report_step
sync
echo c > /proc/sysrq-trigger
EOF
    boot 1-kdump 1800
    local crash
    crash=$(grep -a '^KPACK-TEST: crash kernel version=' "$log" | tail -n1 | tr -d '\r')
    [[ -n $crash ]] || { tail -n 40 "$console" >&2; fail "$(basename "$log"): no crash kernel reported (did it boot?)"; }
    say "$crash"
    [[ $crash == "KPACK-TEST: crash kernel version=$version record=present "* ]] \
        || fail "$(basename "$log"): the crash kernel was not kernel $version booted by kpack's stub: ${crash#KPACK-TEST: }"
    expect_output "^crash loaded: 1, 134217728 bytes$"
    expect_output "^crash kernel: /boot/vmlinuz-$version_re$"
    expect_output "^kdump: current state *: *ready to kdump"
    expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); trial: passed; default: packed$"
    # The boot after the dump: the packed kernel, by default, and the dump it finds.
    expect_boot "$version" present "/boot/vmlinuz-$version" default
    expect_step_ok
    expect_output "^dump: dump\\.[0-9]{12}$"
    expect_output "^dmesg: .*sysrq: Trigger a crash"
}
