#!/usr/bin/env bash
# run.sh SCENARIO BUILD_DIR DEB_DIR — a real Debian 12 system (tests/debian/make-image.sh: its own
# disk, GRUB in its MBR, the cloud kernel) booted again and again in QEMU through its own boot
# loader (no -kernel), with the kpack package built by scripts/build-deb.sh installed inside it.
#
# Each boot, the image's agent prints on the second serial port which kernel booted (uname -r),
# whether kpack's run report is in setup_data and the command line GRUB gave it, runs the step this
# script put on a second disk, then powers off; the first serial port is the console (GRUB, the
# stub, the kernel). Every assertion is on those values: the kernel version, the run report present
# or absent (the agent's record=), the entry (BOOT_IMAGE, kpack.trial) and what kpack-kernel-hook
# status and GRUB's environment say, never on a log line alone.
#
#   trial   (CI) 0: stock boot: update-grub, apt-get install kpack, KPACK_HOOK=yes, sync;
#           1: the trial boot of the packed kernel reaches userspace, `kpack stats` shows the
#              run report, the trial passes; 2: the next boot is packed by default; one byte of its
#              payload is then damaged (the hook's record of the image updated, as if kpack had
#              written it so) and `kpack-kernel-hook trial` arms a trial of it; 3: that trial fails
#              in the stub and the boot after it is stock, unattended: either the stub resets the
#              machine (panic=5 on the trial entry) or, a stub that halts, the harness power-cycles
#              QEMU once the stub's error line has been followed by 30 s of silence; the trial is
#              then failed and the stock kernel the default
#   full    (full matrix) trial, then 4: dpkg -i of a second kernel version (6.12) packs it and
#           arms its trial; 5: its trial boot passes; apt-get purge kpack; 6: the machine boots
#           the newest kernel stock, both kernels byte for byte their packages' (dpkg --verify)
#   uefi    (full matrix) the image's uefi variant under OVMF (its variables kept across boots),
#           systemd-boot and kernel-install: 0: kpack installed, KPACK_HOOK=yes, sync (boot
#           counting on, the kernel added again: a counted packed entry and a stock entry);
#           1: systemd-boot boots the packed entry on trial, the run report is there, the trial passes
#           and systemd-bless-boot marks the entry good; 2: the blessed packed entry is the
#           default; a damaged image is added with kernel-install (a new counted entry);
#           3: it fails in the stub, and the boot after it is the stock entry, unattended
#           (systemd-boot's LoaderEntrySelected names it)
#
# Timings of the image build (cached) and of each boot are printed. Needs root (mmdebstrap),
# QEMU, the .deb in DEB_DIR, and for `full` the 6.12 kernel package (boot.fetch.6.12).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 trial|full|uefi BUILD_DIR DEB_DIR" >&2; exit 2; }
scenario=$1 build=$(realpath "$2") deb_dir=$(realpath "$3")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $scenario in
    trial|full) variant=bios ;;
    uefi) variant=uefi ;;
    *) echo "run.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
fail() { echo "run.sh ($scenario): FAIL: $*" >&2; exit 1; }
say() { echo "run.sh ($scenario): $*"; }
command -v qemu-system-x86_64 > /dev/null || { echo "run.sh: SKIP: qemu-system-x86_64 not installed" >&2; exit 77; }

deb=$(ls "$deb_dir"/kpack_*_amd64.deb 2> /dev/null | head -n1)
[[ -n $deb ]] || fail "no kpack_*_amd64.deb in $deb_dir (package.build)"

started=$EPOCHSECONDS
image_dir=$("$here/make-image.sh" $variant)
# shellcheck disable=SC1091
source "$image_dir/image.env"
say "image: $image_dir/disk.img, kernel $KERNEL_VERSION, built in $BUILD_SECONDS s, $((SIZE_BYTES / 1048576)) MiB of data ($((EPOCHSECONDS - started)) s to get it now)"
version=$KERNEL_VERSION

work=$build/debian/$scenario
rm -rf "$work"
mkdir -p "$work"
cp --sparse=always "$image_dir/disk.img" "$work/disk.img"
firmware=()
if [[ $variant == uefi ]]; then
    # OVMF with a variable store of this run's own, kept across its boots as NVRAM is.
    cp /usr/share/OVMF/OVMF_VARS_4M.fd "$work/OVMF_VARS.fd"
    firmware=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd"
              -drive "if=pflash,format=raw,unit=1,file=$work/OVMF_VARS.fd")
fi

# ---- booting ------------------------------------------------------------------------------------

# step NAME: a directory for the files and step.sh of boot NAME; step.sh is written by the caller.
step_dir() { mkdir -p "$work/$1.step"; echo "$work/$1.step"; }

# vm_start NAME: one QEMU process on the disk and boot NAME's step disk; the console goes to
# NAME.console.log ($console), the agent's port to NAME.agent.log ($log). No -no-reboot: a guest
# reset reboots in the same process, as a machine would. Sets $vm_pid; vm_wait waits for the exit
# (the agent powers off).
vm_start() {
    console=$work/$1.console.log log=$work/$1.agent.log
    : > "$console"
    : > "$log"
    qemu-system-x86_64 -m 1024 -display none -monitor none -nic none "${firmware[@]}" \
        -serial "file:$console" -serial "file:$log" \
        -drive "file=$work/disk.img,format=raw,if=virtio" \
        -drive "file=$work/$1.tar,format=raw,if=virtio,readonly=on" 2> "$console.qemu-stderr" &
    vm_pid=$!
}
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

# boot NAME: pack NAME.step into a tar disk, boot, wait for the power-off.
boot() {
    local name=$1 start=$EPOCHSECONDS
    tar -cf "$work/$name.tar" -C "$work/$name.step" .
    vm_start "$name"
    vm_wait 900
    say "boot $name: $((EPOCHSECONDS - start)) s"
}

# boot_failing NAME: boot NAME, whose trial is expected to stop in the stub: wait for the stub's
# error line on the console; then either a kernel starts again (the stub reset the machine: "Linux
# version" after the error) or, after 30 s of nothing, the harness pulls the plug and powers on
# again, as someone would. Says which, and waits for the power-off of the boot after.
boot_failing() {
    local name=$1 start=$EPOCHSECONDS how= error_at= stub_error
    tar -cf "$work/$name.tar" -C "$work/$name.step" .
    vm_start "$name"
    while kill -0 "$vm_pid" 2> /dev/null; do
        (( EPOCHSECONDS - start < 600 )) || { kill "$vm_pid"; tail -n 30 "$console" >&2; fail "$name: neither the stub's error nor a boot within 600 s"; }
        if grep -aq '^KPACK-TEST: booted ' "$log"; then break; fi
        if grep -aq 'kpack: error' "$console"; then
            error_at=${error_at:-$EPOCHSECONDS}
            if sed -n '/kpack: error/,$p' "$console" | grep -aq 'Linux version'; then
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
# entry systemd-boot booted (LoaderEntrySelected, which the step prints as "selected: ID"); through
# the trial entry or not.
expect_boot() {
    report
    [[ $booted == "KPACK-TEST: booted version=$1 record=$2" ]] \
        || fail "$(basename "$log"): expected kernel $1 with the run report $2, got '${booted#KPACK-TEST: }'"
    if [[ $variant == bios ]]; then
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
    [[ $step_status == 0 ]] || { sed -n '/KPACK-TEST: step begin/,/KPACK-TEST: step end/p' "$log" | tail -n 40 >&2; fail "$(basename "$log"): the step failed (status ${step_status:-none})"; }
}
# The step's output between its markers: OUT=$(step_output).
step_output() { sed -n '/^KPACK-TEST: step begin/,/^KPACK-TEST: step end/p' "$log" | tr -d '\r'; }
expect_output() {
    step_output | grep -Eq -- "$1" || { step_output | tail -n 30 >&2; fail "$(basename "$log"): no line matches: $1"; }
}
stock=/boot/kpack/stock

# What every step prints after its work: kpack's view and GRUB's.
report_step='kpack-kernel-hook status | sed "s/^/status: /"; grub-editenv /boot/grub/grubenv list | sed "s/^/grubenv: /"'

if [[ $variant == uefi ]]; then
    token=$MACHINE_ID
    entries=/boot/efi/loader/entries
    # What each step prints: the entry systemd-boot booted (its id: the file name without the
    # counter), kpack's view, the entries and their options.
    selected='echo "selected: $(tail -c +5 /sys/firmware/efi/efivars/LoaderEntrySelected-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f | tr -d "\000")"'
    report_step="kpack-kernel-hook status | sed 's/^/status: /'; ls $entries | sed 's/^/entry: /'; grep -H '^options' $entries/*.conf | sed 's,^$entries/,options: ,'"

    # ---- 0: the stock system gets kpack; sync turns boot counting on -------------------------
    dir=$(step_dir 0-install)
    cp "$deb" "$dir/kpack.deb"
    cat > "$dir/step.sh" <<STEP
$selected
bootctl is-installed
apt-get install -y --no-install-recommends ./kpack.deb
sed -i 's/^KPACK_HOOK=no/KPACK_HOOK=yes/' /etc/default/kpack
kpack-kernel-hook sync
echo "tries: \$(cat /etc/kernel/tries)"
systemctl is-enabled kpack-trial.service | sed 's/^/unit: /'
$report_step
STEP
    boot 0-install
    expect_boot "$version" absent "$token-$version.conf" default
    expect_step_ok
    expect_output "^tries: 1$"
    expect_output "^unit: enabled$"
    expect_output "^status: $version: kpack image \(stock in $stock/vmlinuz-$version\); systemd-boot: $token-$version\+1.conf, stock entry $token-$version-stock.conf, trial: pending; default: packed$"
    expect_output "^options: $token-$version\+1.conf:options .* panic=5 kpack.trial$"
    ! step_output | grep -q "^entry: $token-$version.conf$" || fail "0-install: the uncounted entry of the stock image remains"

    # ---- 1: the trial boot; systemd-bless-boot marks it good ---------------------------------
    dir=$(step_dir 1-trial)
    cat > "$dir/step.sh" <<STEP
$selected
kpack stats | sed 's/^/stats: /'
# systemd-bless-boot runs once boot-complete.target is reached, maybe after this agent started.
for i in \$(seq 60); do [ -e $entries/$token-$version.conf ] && break; sleep 2; done
journalctl -b -u kpack-trial.service -u systemd-bless-boot.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
STEP
    boot 1-trial
    expect_boot "$version" present "$token-$version.conf" trial
    expect_step_ok
    expect_output "^stats: entry: EFI PE; codec: lz4$"
    expect_output "^journal: kpack-kernel-hook: $version: trial boot passed"
    expect_output "^status: $version: kpack image \(stock in $stock/vmlinuz-$version\); systemd-boot: $token-$version.conf, stock entry $token-$version-stock.conf, trial: passed; default: packed$"
    ! step_output | grep -q "^options: $token-$version.conf:.*kpack.trial" || fail "1-trial: the blessed entry kept the trial's options"

    # ---- 2: the blessed entry by default; a damaged image added on trial ----------------------
    dir=$(step_dir 2-default)
    cat > "$dir/step.sh" <<'STEP'
image=/boot/vmlinuz-$(uname -r)
setup_sects=$(od -An -tu1 -j497 -N1 "$image" | tr -d ' ')
[ "$setup_sects" -ne 0 ] || setup_sects=4
set -- $(od -An -tu4 -j584 -N8 "$image")
at=$(( (setup_sects + 1) * 512 + $1 + $2 / 3 ))
byte=$(od -An -tu1 -j$at -N1 "$image" | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 255)))" | dd of="$image" bs=1 seek=$at conv=notrunc status=none
echo "damaged: byte $at, $byte -> $((byte ^ 255))"
sha256sum < "$image" | cut -d' ' -f1 > /boot/kpack/stock/$(basename "$image").packed
kernel-install add $(uname -r) "$image"
STEP
    { echo "$selected"; echo "$report_step"; } >> "$dir/step.sh"
    boot 2-default
    expect_boot "$version" present "$token-$version.conf" default
    expect_step_ok
    expect_output "^damaged: byte [0-9]+, "
    expect_output "^status: $version: kpack image \(stock in $stock/vmlinuz-$version\); systemd-boot: $token-$version\+1.conf, stock entry $token-$version-stock.conf, trial: pending; default: packed$"

    # ---- 3: its trial fails in the stub; the next boot is the stock entry, unattended ---------
    dir=$(step_dir 3-failed)
    cat > "$dir/step.sh" <<STEP
$selected
$report_step
STEP
    boot_failing 3-failed
    expect_boot "$version" absent "$token-$version-stock.conf" default
    expect_step_ok
    expect_output "^status: $version: kpack image \(stock in $stock/vmlinuz-$version\); systemd-boot: $token-$version\+0-1.conf, stock entry $token-$version-stock.conf, trial: failed; default: stock$"
    say "PASS ($((EPOCHSECONDS - started)) s)"
    rm -f "$work/disk.img"
    exit 0
fi

# ---- 0: the stock system gets kpack -------------------------------------------------------------

dir=$(step_dir 0-install)
cp "$deb" "$dir/kpack.deb"
cat > "$dir/step.sh" <<EOF
update-grub
apt-get install -y --no-install-recommends ./kpack.deb
sed -i 's/^KPACK_HOOK=no/KPACK_HOOK=yes/' /etc/default/kpack
kpack-kernel-hook sync
systemctl is-enabled kpack-trial.service | sed 's/^/unit: /'
$report_step
EOF
boot 0-install
expect_boot "$version" absent "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^unit: enabled$"
expect_output "^status: $version: kpack image \\(stock in $stock/vmlinuz-$version\\); trial: pending; next boot: packed, on trial; default: stock$"
expect_output "^grubenv: next_entry=kpack-trial>kpack-trial-$version$"
expect_output "^grubenv: saved_entry=kpack-stock>kpack-stock-$version$"

# ---- 1: the trial boot ----------------------------------------------------------------------------

dir=$(step_dir 1-trial)
cat > "$dir/step.sh" <<EOF
kpack stats | sed 's/^/stats: /'
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
EOF
boot 1-trial
expect_boot "$version" present "/boot/vmlinuz-$version" trial
expect_step_ok
expect_output "^stats: kpack run report: setup_data/[0-9]+ \\(version 1\\)$"
expect_output "^stats: entry: boot protocol 16/32-bit; codec: lz4$"
expect_output "^journal: kpack-kernel-hook: $version: trial boot passed"
expect_output "^status: $version: kpack image \\(stock in $stock/vmlinuz-$version\\); trial: passed; default: packed$"

# ---- 2: packed by default; a damaged image put on trial --------------------------------------------

dir=$(step_dir 2-default)
cat > "$dir/step.sh" <<'EOF'
image=/boot/vmlinuz-$(uname -r)
kpack stats > /dev/null && echo "stats: report present"
# One byte of the payload, a third of the way in, inverted (setup_sects at 0x1f1, payload_offset
# and payload_length at 0x248: the boot protocol's fields).
setup_sects=$(od -An -tu1 -j497 -N1 "$image" | tr -d ' ')
[ "$setup_sects" -ne 0 ] || setup_sects=4
set -- $(od -An -tu4 -j584 -N8 "$image")
at=$(( (setup_sects + 1) * 512 + $1 + $2 / 3 ))
byte=$(od -An -tu1 -j$at -N1 "$image" | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 255)))" | dd of="$image" bs=1 seek=$at conv=notrunc status=none
echo "damaged: byte $at, $byte -> $((byte ^ 255))"
# As if kpack had written this image: the hook's record of what it wrote.
sha256sum < "$image" | cut -d' ' -f1 > /boot/kpack/stock/$(basename "$image").packed
kpack-kernel-hook trial $(uname -r)
EOF
echo "$report_step" >> "$dir/step.sh"
boot 2-default
expect_boot "$version" present "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^stats: report present$"
expect_output "^damaged: byte [0-9]+, "
expect_output "^status: $version: kpack image \\(stock in $stock/vmlinuz-$version\\); trial: pending; next boot: packed, on trial; default: stock$"

# ---- 3: the damaged image's trial fails; the next boot is stock, unattended --------------------

dir=$(step_dir 3-failed)
cat > "$dir/step.sh" <<EOF
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
EOF
boot_failing 3-failed
expect_boot "$version" absent "$stock/vmlinuz-$version" default
expect_step_ok
expect_output "^journal: kpack-kernel-hook: $version: trial boot failed \\(this boot is $version, stock\\)"
expect_output "^status: $version: kpack image \\(stock in $stock/vmlinuz-$version\\); trial: failed; default: stock$"
! step_output | grep -q '^grubenv: next_entry=kpack' || fail "3-failed: next_entry still armed"

if [[ $scenario == full ]]; then
    # ---- 4: a second kernel version is installed: packed, on trial ----------------------------------
    source "$here/../boot/fixture.sh"
    boot_fixture "$build/boot" 6.12
    deb612=$(dirname "$(dirname "$vmlinuz")").deb
    [[ -s $deb612 ]] || fail "$deb612: the 6.12 kernel package is missing (boot.fetch.6.12)"
    version612=$(dpkg-deb -f "$deb612" Package | sed 's/^linux-image-//')
    dir=$(step_dir 4-install-kernel)
    cp "$deb612" "$dir/kernel.deb"
    cat > "$dir/step.sh" <<EOF
dpkg -i ./kernel.deb
$report_step
EOF
    boot 4-install-kernel
    expect_boot "$version" absent "$stock/vmlinuz-$version" default
    expect_step_ok
    expect_output "kpack-kernel-hook: $version612: packed /boot/vmlinuz-$version612 "
    expect_output "^status: $version612: kpack image \\(stock in $stock/vmlinuz-$version612\\); trial: pending; next boot: packed, on trial; default: stock$"

    # ---- 5: its trial passes; kpack is purged ---------------------------------------------------------
    dir=$(step_dir 5-purge)
    cat > "$dir/step.sh" <<EOF
kpack stats > /dev/null && echo "stats: report present"
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
apt-get purge -y kpack
for package in linux-image-$version linux-image-$version612; do
    [ -z "\$(dpkg --verify \$package)" ] && echo "verify: \$package unchanged"
done
[ -e /boot/kpack ] || echo "gone: /boot/kpack"
grep -c kpack /boot/grub/grub.cfg | sed 's/^/grub.cfg kpack lines: /'
grub-editenv /boot/grub/grubenv list | sed 's/^/grubenv: /'
EOF
    boot 5-purge
    expect_boot "$version612" present "/boot/vmlinuz-$version612" trial
    expect_step_ok
    expect_output "^journal: kpack-kernel-hook: $version612: trial boot passed"
    expect_output "^status: $version612: kpack image \\(stock in $stock/vmlinuz-$version612\\); trial: passed; default: packed$"
    expect_output "^verify: linux-image-$version unchanged$"
    expect_output "^verify: linux-image-$version612 unchanged$"
    expect_output "^gone: /boot/kpack$"
    expect_output "^grub.cfg kpack lines: 0$"
    ! step_output | grep -q '^grubenv: .*kpack' || fail "5-purge: grubenv still holds kpack's entries"

    # ---- 6: stock, the newest kernel -------------------------------------------------------------
    dir=$(step_dir 6-stock)
    echo 'command -v kpack || echo "kpack: not installed"' > "$dir/step.sh"
    boot 6-stock
    expect_boot "$version612" absent "/boot/vmlinuz-$version612" default
    expect_step_ok
    expect_output "^kpack: not installed$"
fi

say "PASS ($((EPOCHSECONDS - started)) s)"
rm -f "$work/disk.img"
