# shim.sh — sourced by tests/debian/run.sh: Secure Boot the way a Debian machine boots, on the
# secure image. OVMF carries Microsoft's keys with Secure Boot enforced; it starts Debian's shim
# (signed by Microsoft), which starts Debian's GRUB (signed by Debian), which has shim verify the
# kernel: Debian's own, or kpack's image signed with the machine owner key that mokutil and
# MokManager enrolled. The assertions are on the kernel that booted, GRUB's BOOT_IMAGE, what
# mokutil, the kernel's lockdown, kpack stats and kpack-kernel-hook status say.
# The kdump sequence is enrol's with kdump-tools installed at step 0, and the trial boot crashed
# (tests/debian/kdump.sh): locked down, kdump-tools loads the crash kernel with kexec_file_load,
# which checks the image's signature against the keys the kernel trusts, the machine owner keys
# among them.

report_step='kpack-kernel-hook status | sed "s/^/status: /"; grub-editenv /boot/grub/grubenv list | sed "s/^/grubenv: /"'
# What Secure Boot looks like from the booted system, and the firmware's boot entry that started it.
secure_step='mokutil --sb-state | sed "s/^/sb-state: /"
sed "s/^/lockdown: /" /sys/kernel/security/lockdown
current=$(efibootmgr | sed -n "s/^BootCurrent: //p")
efibootmgr | sed -n "s/^Boot\([0-9A-F]*\)\* \([^\t]*\).*/boot-entry: \1 \2/p" | sed "s/^boot-entry: $current /booted entry: /"'
# The boot_params page the kernel started with and its setup_data chain's types, in order, as
# tests/boot/init.c prints them (boot_params_diff, setup_data_types).
bootparams_step='echo KPACK_BOOT_PARAMS_BEGIN
od -An -v -tx1 -w32 /sys/kernel/boot_params/data | awk "{ printf \"%04x: \", (NR - 1) * 32; for (i = 1; i <= NF; i++) printf \"%s\", \$i; print \"\" }"
echo KPACK_BOOT_PARAMS_END
types=$(ls /sys/kernel/boot_params/setup_data | sort -n | xargs -I{} cat /sys/kernel/boot_params/setup_data/{}/type | paste -sd, -)
echo "KPACK_SETUP_DATA types=${types:-none}"'
key=/var/lib/dkms/mok.key cert=/var/lib/dkms/mok.pub
password=kpack-mok-1234
console_keys=1
subject="kpack test machine owner key"
down='\x1b[B' enter='\r'

# expect_refused ENTRY: shim refused the packed image (GRUB's words), and GRUB's ENTRY (trial or
# packed) said so and booted the stock kernel with kpack.refused.
expect_refused() {
    grep -aq 'error: bad shim signature' "$console" || fail "$(basename "$console"): no refusal by shim (GRUB's 'bad shim signature')"
    grep -aq 'kpack: GRUB cannot load the packed kernel' "$console" \
        || fail "$(basename "$console"): the $1 entry did not say it fell back to the stock kernel"
    local cmdline
    cmdline=$(grep -a '^KPACK-TEST: cmdline ' "$log" | tail -n1 | tr -d '\r')
    [[ " $cmdline " == *" kpack.refused "* ]] \
        || fail "$(basename "$log"): the stock kernel was not booted by the $1 entry (no kpack.refused: ${cmdline#KPACK-TEST: })"
}

# mokmanager_boot NAME Enroll|Delete: boot NAME, where shim finds MokNew or MokDel and starts
# MokManager, whose screens a person goes through so: any key within its 10 s; "Enroll MOK" or
# "Delete MOK", the second item; "Continue", the item after "View key 0"; "Yes", the second answer
# to "Enroll the key(s)?" or "Delete the key(s)?"; the password mokutil was given; "Reboot", now the
# first item.
mokmanager_boot() {
    boot_typing "$1" \
        "wait:Press any key to perform MOK management" "keys: " \
        "wait:$2 MOK" "sleep:1" "keys:$down$enter" \
        "wait:View key 0" "sleep:1" "keys:$down$enter" \
        "wait:$2 the key" "wait:Yes" "sleep:1" "keys:$down$enter" \
        "wait:Password" "sleep:1" "keys:$password$enter" \
        "wait:Perform MOK management" "wait:Reboot" "sleep:1" "keys:$enter"
}

# untrusted_sequence: the key was never enrolled, and KPACK_SIGN_UNTRUSTED=yes has the hook sign
# with it all the same. 0: packed, signed, on trial; 1: shim refuses the trial's image, the trial
# entry boots the stock kernel unattended, and the trial is failed.
untrusted_sequence() {
    dir=$(step_dir 0-install)
    cp "$deb" "$dir/kpack.deb"
    cat > "$dir/step.sh" <<EOF
$install_lines
sed -i 's/^KPACK_SIGN_UNTRUSTED=no/KPACK_SIGN_UNTRUSTED=yes/' /etc/default/kpack
kpack-kernel-hook sync 2>&1 | sed 's/^/sync: /'
$report_step
EOF
    boot 0-install
    expect_installed
    expect_output "^sync: kpack-kernel-hook: $version_re: KPACK_SIGN_UNTRUSTED=yes in /etc/default/kpack: signing all the same \\(this machine does not trust $cert: "
    expect_output "^sync: kpack-kernel-hook: $version_re: packed /boot/vmlinuz-$version_re "
    expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', this machine does not trust .*; trial: pending; next boot: packed, on trial; default: stock$"

    # The trial entry loads the stock kernel itself when GRUB cannot load the packed one (11_kpack).
    dir=$(step_dir 1-refused)
    cat > "$dir/step.sh" <<EOF
$secure_step
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
EOF
    boot 1-refused
    expect_boot "$version" absent "$stock/vmlinuz-$version" default
    expect_step_ok
    expect_output "^sb-state: SecureBoot enabled$"
    expect_output "^lockdown: .*\\[(integrity|confidentiality)\\]"
    expect_output "^booted entry: debian$"
    expect_refused trial
    expect_output "^journal: kpack-kernel-hook: $version_re: trial boot failed \\(this boot is $version_re, stock\\)"
    expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', this machine does not trust .*; trial: failed; default: stock$"
    expect_no_output '^grubenv: next_entry=kpack'
}

# mokutil_lines import|delete: the step's lines that have mokutil ask shim to enrol or delete the
# key at the next boot. mokutil asks for the password MokManager will ask for, twice, on a terminal
# (script gives it one), and flushes what was typed before it asked: each answer goes once its
# prompt is there. Prints "mokutil: import done" (or failed) and what mokutil said.
mokutil_lines() {
    cat <<EOF
mkfifo /run/mokutil.in
script -qec "mokutil --$1 $cert" /dev/null < /run/mokutil.in > /run/mokutil.out 2>&1 &
exec 3> /run/mokutil.in
for prompt in 1 2; do
    for i in \$(seq 300); do [ "\$(grep -c 'input password' /run/mokutil.out)" -ge \$prompt ] && break; sleep 0.2; done
    sleep 1
    echo $password >&3
done
exec 3>&-
wait \$! && echo "mokutil: $1 done" || echo "mokutil: $1 failed"
tr -d '\r' < /run/mokutil.out | sed 's/^/mokutil: /'
rm -f /run/mokutil.in /run/mokutil.out
EOF
}

# The first boot's lines: installed as Debian's installer does, kpack installed and on, and the
# key pair DKMS makes for its modules (dkms generate_mok), which the hook signs with by default.
install_lines="# The ESP's loaders under EFI/debian and a boot entry for shim there (efibootmgr), as d-i does.
grub-install --target=x86_64-efi --uefi-secure-boot 2>&1 | sed 's/^/grub-install: /'
update-grub
$secure_step
apt-get install -y --no-install-recommends ./kpack.deb
sed -i 's/^KPACK_HOOK=no/KPACK_HOOK=yes/' /etc/default/kpack
mkdir -p /var/lib/dkms
openssl req -new -x509 -nodes -days 36500 -subj '/CN=$subject/' -newkey rsa:2048 \\
    -keyout $key -outform DER -out $cert 2> /dev/null
chmod 600 $key"
expect_installed() {
    expect_boot "$version" absent "/boot/vmlinuz-$version" default
    expect_step_ok
    expect_output "^sb-state: SecureBoot enabled$"
    expect_output "^lockdown: .*\\[(integrity|confidentiality)\\]"
    expect_output "^grub-install: Installation finished. No error reported.$"
    expect_output "^booted entry: UEFI Misc Device$"  # the disk's removable-media path: no entry of its own yet
    expect_output "^boot-entry: [0-9A-F]{4} debian$"
}
[[ $sequence == untrusted ]] && { untrusted_sequence; return 0; }

# ---- 0: the stock system; kpack refuses the key no one enrolled; mokutil --import ---------------

dir=$(step_dir 0-install)
cp "$deb" "$dir/kpack.deb"
install_kdump=
[[ $sequence == kdump ]] && install_kdump=$(kdump_install_lines "$dir")
cat > "$dir/step.sh" <<EOF
$install_lines
$install_kdump
kpack-kernel-hook sync 2>&1 | sed 's/^/sync: /'
$(mokutil_lines import)
mokutil --list-new | sed -n 's/^ *Subject: /new: /p'
kpack-kernel-hook sync 2>&1 | sed 's/^/sync pending: /'
$report_step
EOF
boot 0-install
expect_installed
expect_output "^sync: kpack-kernel-hook: $version_re: Secure Boot is on and the image cannot be signed \\(this machine does not trust $cert: it chains to no certificate in db or MokListRT\\): keeping the stock kernel"
expect_output "^mokutil: import done$"
expect_output "^new: CN ?= ?$subject$"
expect_output "^sync pending: kpack-kernel-hook: $version_re: .*a key enrolment is pending"
expect_output "^status: $version_re: stock; default: stock$"
expect_no_output '^grubenv: next_entry=kpack'
[[ $sequence != kdump ]] || kdump_installed

# ---- 1: MokManager enrols the key, typed at the console as a person would; then kpack signs --------

dir=$(step_dir 1-enrol)
cat > "$dir/step.sh" <<EOF
$secure_step
$bootparams_step
mokutil --list-enrolled | sed -n 's/^ *Subject: /enrolled: /p'
mokutil --test-key $cert | sed 's/^/test-key: /'
kpack-kernel-hook sync 2>&1 | sed 's/^/sync: /'
$report_step
EOF
mokmanager_boot 1-enrol Enroll
expect_boot "$version" absent "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^sb-state: SecureBoot enabled$"
expect_output "^booted entry: debian$"
expect_output "^enrolled: CN ?= ?$subject$"
expect_output "^test-key: .*is already enrolled"
expect_output "^sync: kpack-kernel-hook: $version_re: packed /boot/vmlinuz-$version_re "
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', trusted by this machine; trial: pending; next boot: packed, on trial; default: stock$"

trust="signed by 'CN ?= ?$subject', trusted by this machine; "

# ---- 2 (kdump): the packed kernel's trial boot, locked down, loads itself as the crash kernel -----
# through kexec_file_load, which refuses the same image unsigned, or signed with a key this machine
# never enrolled (what kdump-tools says when it is told to load those), and takes it signed with the
# enrolled key; then the crash, the dump, the boot after.

# refused_load NAME: the lines that have kdump-config load /var/tmp/vmlinuz-NAME instead, and say
# what it and the kernel said, then whether a crash kernel is loaded.
refused_load() {
    cat <<EOF
sed -i '/^KDUMP_KERNEL=/d' /etc/default/kdump-tools
echo KDUMP_KERNEL=/var/tmp/vmlinuz-$1 >> /etc/default/kdump-tools
kdump-config unload > /dev/null
kdump-config load 2>&1 | sed 's/^/$1 load: /'
echo "$1: crash loaded \$(cat /sys/kernel/kexec_crash_loaded)"
journalctl -k -b -o cat --no-pager | grep 'kexec_file' | tail -n1 | sed 's/^/$1 kernel: /'
EOF
}
if [[ $sequence == kdump ]]; then
    kdump_crash 2-kdump "$trust" "$secure_step
sed 's/^/kexec command: /' /var/crash/kexec_cmd
cp /boot/vmlinuz-$version /var/tmp/vmlinuz-unsigned
sbattach --remove /var/tmp/vmlinuz-unsigned
openssl req -new -x509 -nodes -days 1 -subj '/CN=a key nobody enrolled/' -newkey rsa:2048 \
    -keyout /var/tmp/other.key -out /var/tmp/other.pem 2> /dev/null
sbsign --key /var/tmp/other.key --cert /var/tmp/other.pem --output /var/tmp/vmlinuz-untrusted \
    /var/tmp/vmlinuz-unsigned 2> /dev/null
cp /etc/default/kdump-tools /var/tmp/kdump-tools.saved
$(refused_load unsigned)
$(refused_load untrusted)
cp /var/tmp/kdump-tools.saved /etc/default/kdump-tools
kdump-config load 2>&1 | sed 's/^/signed load: /'"
    expect_output "^sb-state: SecureBoot enabled$"
    expect_output "^lockdown: .*\\[(integrity|confidentiality)\\]"
    expect_output "^booted entry: debian$"
    expect_output "^kexec command: /sbin/kexec -p -s .*/var/lib/kdump/vmlinuz$"
    # kexec's and the kernel's own words: no signature (ENODATA), a key it does not trust.
    for image in unsigned untrusted; do
        expect_output "^$image load: kexec_file_load failed: "
        expect_output "^$image load: .*failed to load kdump kernel"
        expect_output "^$image: crash loaded 0$"
        expect_output "^$image kernel: kexec_file: .*signature verification failed"
        say "$image image refused: $(step_output | sed -n "s/^$image \(load\|kernel\): \(.*kexec_file.*\)/\2/p" | paste -sd' ')"
    done
    expect_output "^signed load: .*loaded kdump kernel"
    return 0
fi

# ---- 2: the packed kernel's trial boot, through shim, locked down --------------------------------

dir=$(step_dir 2-trial)
revoke=
[[ $sequence != revoked ]] || revoke=$(mokutil_lines delete)
cat > "$dir/step.sh" <<EOF
$secure_step
$bootparams_step
kpack stats | sed 's/^/stats: /'
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
journalctl -k -b -o cat --no-pager | grep -i -e 'secure boot' -e lockdown | sed 's/^/kernel: /'
$report_step
$revoke
EOF
boot 2-trial
expect_boot "$version" present "/boot/vmlinuz-$version" trial
expect_step_ok
expect_output "^sb-state: SecureBoot enabled$"
expect_output "^lockdown: .*\\[(integrity|confidentiality)\\]"
expect_output "^booted entry: debian$"
expect_output "^kernel: Kernel is locked down from EFI Secure Boot"
expect_output "^stats: kpack run report: setup_data/[0-9]+ \\(version 1\\)$"
expect_output "^stats: entry: EFI PE; codec: lz4$"
expect_output "^journal: kpack-kernel-hook: $version_re: trial boot passed"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); ${trust}trial: passed; default: packed$"
# What the kernel saw: boot 1 (stock) and boot 2 (packed) both came through shim and GRUB, which
# start the image's PE entry as OVMF's -kernel does (stock's EFI stub fills a zeroed page, kpack's
# PE entry its own), so tests/efi's allowlist for that path applies as it is.
source "$here/../lib/parity_verdict.sh"
parity_verdict "$build/tests/boot_params_diff" "$work/1-enrol.agent.log" "$work/2-trial.agent.log" \
    "$here/../efi/parity-allow.txt" kernel lz4 || fail "the packed kernel saw other boot_params than the stock one through shim"
# And the same setup_data nodes, kpack's run report aside.
types_stock=$(setup_data_types "$work/1-enrol.agent.log") && types_packed=$(setup_data_types "$work/2-trial.agent.log") \
    || fail "no setup_data types reported"
[[ $types_stock == "$types_packed" ]] || fail "setup_data types: stock's ${types_stock:-none}, packed ${types_packed:-none}"
say "setup_data types ${types_stock:-none}, as stock's"
[[ $sequence == revoked ]] || return 0

# ---- 3 (revoked): MokManager deletes the key; shim refuses the packed default, whose entry boots
# the stock kernel with kpack.refused; the hook fails the image's trial, stock is the default ------

expect_output "^mokutil: delete done$"
dir=$(step_dir 3-revoked)
cat > "$dir/step.sh" <<EOF
$secure_step
mokutil --list-enrolled | sed -n 's/^ *Subject: /enrolled: /p'
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
EOF
mokmanager_boot 3-revoked Delete
expect_boot "$version" absent "$stock/vmlinuz-$version" default
expect_step_ok
expect_refused packed
expect_output "^sb-state: SecureBoot enabled$"
expect_output "^lockdown: .*\\[(integrity|confidentiality)\\]"
expect_no_output "^enrolled: CN ?= ?$subject$"
expect_output "^journal: kpack-kernel-hook: $version_re: GRUB could not load the packed kernel .*: the stock kernel is the default now"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', this machine does not trust .*; trial: failed; default: stock$"
