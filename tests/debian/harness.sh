# harness.sh — sourced by tests/debian/run.sh: booting the Debian system image in QEMU through its
# own boot loader, and reading what its agent reports. Expects $work (this run's directory, holding
# disk.img), $firmware (QEMU's firmware options, empty for SeaBIOS), $loader (grub or
# systemd-boot) and fail/say from run.sh.
#
# Each boot, the image's agent (tests/debian/make-image.sh) prints on the second serial port which
# kernel booted (uname -r), whether kpack's run report is in setup_data and the command line, runs
# the step this script put on a second disk, then powers off; the first serial port is the console
# (the boot loader, the stub, the kernel).

source "$here/../lib/qemu.sh"

# step_dir NAME: a directory for the files and step.sh of boot NAME; the caller writes step.sh.
step_dir() { mkdir -p "$work/$1.step"; echo "$work/$1.step"; }

# vm_start NAME: one QEMU process on the disk and boot NAME's step disk (NAME.step packed into a
# tar archive); the console goes to
# NAME.console.log ($console), the agent's port to NAME.agent.log ($log). No -no-reboot: a guest
# reset reboots in the same process, as a machine would. Sets $vm_pid. With $console_keys set, the
# console is also a socket, $work/console.sock, for keys typed at it (tests/debian/serial_keys.py).
vm_start() {
    console=$work/$1.console.log log=$work/$1.agent.log
    : > "$console"
    : > "$log"
    tar -cf "$work/$1.tar" -C "$work/$1.step" .
    local output="file:$console" typed=()
    if [[ -n ${console_keys:-} ]]; then
        rm -f "$work/console.sock"
        output=chardev:console
        typed=(-chardev "socket,id=console,path=$work/console.sock,server=on,wait=off,logfile=$console")
    fi
    qemu_machine "$output" --memory 1024 --reboot
    "${qemu_cmd[@]}" "${typed[@]}" "${firmware[@]}" -serial "file:$log" \
        -drive "file=$work/disk.img,format=raw,if=virtio" \
        -drive "file=$work/$1.tar,format=raw,if=virtio,readonly=on" 2> "$console.qemu-stderr" &
    vm_pid=$!
}
# vm_wait SECONDS: wait for QEMU's exit (the agent powers off).
vm_wait() {
    local timeout=$1 start=$EPOCHSECONDS
    while kill -0 "$vm_pid" 2> /dev/null; do
        if (( EPOCHSECONDS - start > timeout )); then
            kill "$vm_pid"; wait "$vm_pid" 2> /dev/null || true
            tail -n 30 "$console" >&2
            fail "$(basename "$console"): no power-off within $timeout s"
        fi
        sleep 2
    done
    wait "$vm_pid" || fail "$(basename "$console"): QEMU failed: $(cat "$console.qemu-stderr")"
}

# boot NAME [SECONDS]: boot NAME, wait for the power-off (900 s at most).
boot() {
    local name=$1 start=$EPOCHSECONDS
    vm_start "$name"
    vm_wait "${2:-900}"
    say "boot $name: $((EPOCHSECONDS - start)) s"
}

# boot_typing NAME ACTION...: boot NAME while someone types at its console what ACTIONs say
# (tests/debian/serial_keys.py: wait for text, type keys), within 600 s; then wait for the power-off.
boot_typing() {
    local name=$1 start=$EPOCHSECONDS
    shift
    vm_start "$name"
    if ! "$here/serial_keys.py" "$work/console.sock" 600 "$@" > "$work/$name.keys.log" 2>&1; then
        kill "$vm_pid"; wait "$vm_pid" 2> /dev/null || true
        cat "$work/$name.keys.log" >&2
        fail "$name: the console did not show what was to be typed at"
    fi
    say "boot $name: typed at the console: $(grep -c ' done$' "$work/$name.keys.log") actions"
    vm_wait 900
    say "boot $name: $((EPOCHSECONDS - start)) s"
}

# boot_failing NAME: boot NAME, whose trial is expected to stop in the stub: wait for the stub's
# error line on the console; then either a kernel starts again (the stub reset the machine: "Linux
# version" after the error) or, after 30 s of nothing, the harness pulls the plug and powers on
# again, as someone would. Says which, and waits for the power-off of the boot after.
boot_failing() {
    local name=$1 start=$EPOCHSECONDS how= error_at= stub_error
    vm_start "$name"
    while kill -0 "$vm_pid" 2> /dev/null; do
        (( EPOCHSECONDS - start < 600 )) || { kill "$vm_pid"; tail -n 30 "$console" >&2; fail "$name: neither the stub's error nor a boot within 600 s"; }
        if grep -aq '^KPACK-TEST: booted ' "$log"; then break; fi
        if grep -aq 'kpack: error' "$console"; then
            error_at=${error_at:-$EPOCHSECONDS}
            if grep -aq 'Linux version' <<< "$(sed -n '/kpack: error/,$p' "$console")"; then
                how="the stub reset the machine (panic=5 on the trial entry)"
                break
            fi
            if (( EPOCHSECONDS - error_at >= 30 )); then
                how="the stub halted; the harness power-cycled the machine 30 s after its error line"
                kill "$vm_pid"
                wait "$vm_pid" 2> /dev/null || true
                mv "$console" "$work/$name.halted.console.log"
                vm_start "$name"
                break
            fi
        fi
        sleep 2
    done
    stub_error=$(cat "$work/$name.halted.console.log" "$console" 2> /dev/null | grep -a 'kpack: error' | head -n1 | tr -d '\r' || true)
    [[ -n $stub_error ]] || fail "$name: the damaged image did not stop in the stub with an error line"
    say "$name: $stub_error"
    say "$name: ${how:-booted on without a stub error}"
    [[ -n $how ]] || fail "$name: the trial boot did not fail in the stub"
    vm_wait 900
    say "boot $name: $((EPOCHSECONDS - start)) s (both boots)"
}

# The agent's report of the boot that ran the step: the last "booted" line, its command line, the
# step's status.
report() {
    booted=$(grep -a '^KPACK-TEST: booted ' "$log" | tail -n1 | tr -d '\r')
    cmdline=$(grep -a '^KPACK-TEST: cmdline ' "$log" | tail -n1 | tr -d '\r')
    [[ -n $booted ]] || { tail -n 40 "$console" >&2; fail "$(basename "$log"): the agent never reported (no userspace?)"; }
    step_status=$(grep -a '^KPACK-TEST: step end status=' "$log" | tail -n1 | tr -d '\r' | sed 's/.*status=//')
    say "$booted"
}
# expect_boot VERSION present|absent WHAT [trial|default]: this boot was kernel VERSION, with or
# without kpack's run report, loaded from WHAT: the image GRUB loaded (BOOT_IMAGE), or the loader
# entry systemd-boot booted (LoaderEntrySelected, which the step prints as "selected: ID"; WHAT is
# then an extended regular expression); through the trial entry or not.
expect_boot() {
    report
    [[ $booted == "KPACK-TEST: booted version=$1 record=$2" ]] \
        || fail "$(basename "$log"): expected kernel $1 with the run report $2, got '${booted#KPACK-TEST: }'"
    if [[ $loader != systemd-boot ]]; then
        [[ " $cmdline " == *" BOOT_IMAGE=$3 "* ]] || fail "$(basename "$log"): GRUB did not boot $3: ${cmdline#KPACK-TEST: }"
    else
        expect_output "^selected: $3\$"
    fi
    case ${4:-} in
        trial) [[ " $cmdline " == *" kpack.trial "* && " $cmdline " == *" panic=5 "* ]] || fail "$(basename "$log"): not the trial entry: $cmdline" ;;
        default) [[ " $cmdline " != *" kpack.trial "* ]] || fail "$(basename "$log"): the trial entry, not the default one" ;;
    esac
}
expect_step_ok() {
    [[ $step_status == 0 ]] || { step_output | tail -n 40 >&2; fail "$(basename "$log"): the step failed (status ${step_status:-none})"; }
}
# The step's output between its markers. (grep reads all of it, never -q: under pipefail, grep -q
# leaving early would fail the pipeline with sed's SIGPIPE on a long output.)
step_output() { sed -n '/^KPACK-TEST: step begin/,/^KPACK-TEST: step end/p' "$log" | tr -d '\r'; }
expect_output() {
    step_output | grep -aE -- "$1" > /dev/null || { step_output | tail -n 30 >&2; fail "$(basename "$log"): no line matches: $1"; }
}
expect_no_output() {
    ! step_output | grep -aE -- "$1" > /dev/null || { step_output | grep -aE -- "$1" >&2; fail "$(basename "$log"): a line matches: $1"; }
}

# A step's shell lines that damage the running kernel's /boot image: one byte of its payload, a
# third of the way in, inverted (setup_sects at 0x1f1, payload_offset and payload_length at 0x248:
# the boot protocol's fields), and the hook's record of the image it wrote updated, as if kpack had
# written it so.
damage_step='image=/boot/vmlinuz-$(uname -r)
setup_sects=$(od -An -tu1 -j497 -N1 "$image" | tr -d " ")
[ "$setup_sects" -ne 0 ] || setup_sects=4
set -- $(od -An -tu4 -j584 -N8 "$image")
at=$(( (setup_sects + 1) * 512 + $1 + $2 / 3 ))
byte=$(od -An -tu1 -j$at -N1 "$image" | tr -d " ")
printf "\\$(printf %03o $((byte ^ 255)))" | dd of="$image" bs=1 seek=$at conv=notrunc status=none
echo "damaged: byte $at, $byte -> $((byte ^ 255))"
sha256sum < "$image" | cut -d" " -f1 > /boot/kpack/stock/$(basename "$image").packed'

# The second kernel version for the full sequences: on Debian 12 its 6.12 cloud kernel package
# (boot.fetch.6.12); on another release the newest cloud kernel of its backports, with every package
# its installation takes (scripts/fetch-kernel.sh --install-set: since 6.19 linux-binary,
# linux-base and linux-modules beside the linux-image meta package). Sets $kernel_debs (the
# directory of .debs), $version2 and $version2_re.
second_kernel() {
    kernel_debs=$work/second-kernel
    rm -rf "$kernel_debs"
    mkdir -p "$kernel_debs"
    if [[ $suite == bookworm ]]; then
        source "$here/../boot/fixture.sh"
        boot_fixture "$build/boot" 6.12
        local deb
        deb=$(dirname "$(dirname "$vmlinuz")").deb
        [[ -s $deb ]] || fail "$deb: the 6.12 kernel package is missing (boot.fetch.6.12)"
        cp "$deb" "$kernel_debs/"
    else
        "$here/../../scripts/fetch-kernel.sh" --suite "$suite-backports" --install-set "$kernel_debs" > /dev/null \
            || fail "cannot fetch $suite-backports' kernel"
    fi
    local meta
    meta=$(ls "$kernel_debs"/linux-image-*.deb | head -n1)
    version2=$(dpkg-deb -f "$meta" Package | sed 's/^linux-image-//')
    # The same in a regular expression: Debian's versions hold a + (6.12.117+deb12-...).
    version2_re=$(printf '%s' "$version2" | sed 's/[.+]/\\&/g')
}

# install_second_kernel_step [PRELUDE]: step 4 of the full sequence under either loader: boot a step
# that runs PRELUDE (shell lines), installs the second kernel's packages with apt, then $report_step.
install_second_kernel_step() {
    second_kernel
    local dir
    dir=$(step_dir 4-install-kernel)
    mkdir -p "$dir/kernel"
    cp "$kernel_debs"/*.deb "$dir/kernel/"
    cat > "$dir/step.sh" <<STEP
${1:-}
# An initramfs for this machine's modules only: with Debian's MODULES=most, update-initramfs
# takes minutes under TCG.
sed -i 's/^MODULES=.*/MODULES=dep/' /etc/initramfs-tools/initramfs.conf
apt-get install -y --no-install-recommends ./kernel/*.deb
$report_step
STEP
    boot 4-install-kernel 1500
}

# A step's shell lines: for each of VERSIONS, "verify: linux-image-VERSION unchanged" when
# /boot/vmlinuz-VERSION has the bytes its package shipped (the md5sums dpkg keeps: of
# boot/vmlinuz-VERSION in linux-image-VERSION, or since 6.19 of usr/lib/modules/VERSION/vmlinuz in
# linux-binary-VERSION, which /boot/vmlinuz-VERSION is a copy of), and what dpkg --verify says of
# those packages (it also lists the documentation the image leaves out).
verify_kernels_lines() {
    cat <<LINES
for v in $*; do
    for pkg in linux-image-\$v linux-binary-\$v; do
        [ -f /var/lib/dpkg/info/\$pkg.md5sums ] || continue
        sum=\$(sed -n "s#  \\(boot/vmlinuz-\$v\\|usr/lib/modules/\$v/vmlinuz\\)\\\$##p" /var/lib/dpkg/info/\$pkg.md5sums)
        [ -n "\$sum" ] && [ "\$(md5sum < /boot/vmlinuz-\$v | cut -d' ' -f1)" = "\$sum" ] && echo "verify: linux-image-\$v unchanged"
        dpkg --verify \$pkg | sed 's/^/dpkg-verify: /'
    done
done
LINES
}
