# shim.sh — sourced by tests/debian/run.sh: Secure Boot the way a Debian machine boots, on the
# secure image. OVMF carries Microsoft's keys with Secure Boot enforced; it starts Debian's shim
# (signed by Microsoft), which starts Debian's GRUB (signed by Debian), which has shim verify the
# kernel: Debian's own, or kpack's image signed with the machine owner key that mokutil and
# MokManager enrolled. The assertions are on the kernel that booted, GRUB's BOOT_IMAGE, what
# mokutil, the kernel's lockdown, kpack stats and kpack-kernel-hook status say.

report_step='kpack-kernel-hook status | sed "s/^/status: /"; grub-editenv /boot/grub/grubenv list | sed "s/^/grubenv: /"'
# What Secure Boot looks like from the booted system, and the firmware's boot entry that started it.
secure_step='mokutil --sb-state | sed "s/^/sb-state: /"
sed "s/^/lockdown: /" /sys/kernel/security/lockdown
current=$(efibootmgr | sed -n "s/^BootCurrent: //p")
efibootmgr | sed -n "s/^Boot\([0-9A-F]*\)\* \([^\t]*\).*/boot-entry: \1 \2/p" | sed "s/^boot-entry: $current /booted entry: /"'
key=/var/lib/dkms/mok.key cert=/var/lib/dkms/mok.pub
password=kpack-mok-1234
console_keys=1
subject="kpack test machine owner key"

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
    expect_output "^booted entry: debian$"
    grep -aq 'error: bad shim signature' "$console" || fail "$(basename "$console"): no refusal by shim (GRUB's 'bad shim signature')"
    grep -aq 'kpack: GRUB cannot load the packed kernel' "$console" \
        || fail "$(basename "$console"): the trial entry did not say it fell back to the stock kernel"
    expect_output "^journal: kpack-kernel-hook: $version_re: trial boot failed \\(this boot is $version_re, stock\\)"
    expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', this machine does not trust .*; trial: failed; default: stock$"
    expect_no_output '^grubenv: next_entry=kpack'
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
cat > "$dir/step.sh" <<EOF
$install_lines
kpack-kernel-hook sync 2>&1 | sed 's/^/sync: /'
# mokutil asks for the password MokManager will ask for, twice, on a terminal (script gives it one),
# and flushes what was typed before it asked: each answer goes once its prompt is there.
mkfifo /run/mokutil.in
script -qec "mokutil --import $cert" /dev/null < /run/mokutil.in > /run/mokutil.out 2>&1 &
exec 3> /run/mokutil.in
for prompt in 1 2; do
    for i in \$(seq 300); do [ "\$(grep -c 'input password' /run/mokutil.out)" -ge \$prompt ] && break; sleep 0.2; done
    sleep 1
    echo $password >&3
done
exec 3>&-
wait \$! && echo "mokutil: imported" || echo "mokutil: failed"
tr -d '\r' < /run/mokutil.out | sed 's/^/mokutil: /'
mokutil --list-new | sed -n 's/^ *Subject: /new: /p'
kpack-kernel-hook sync 2>&1 | sed 's/^/sync pending: /'
$report_step
EOF
boot 0-install
expect_installed
expect_output "^sync: kpack-kernel-hook: $version_re: Secure Boot is on and the image cannot be signed \\(this machine does not trust $cert: it chains to no certificate in db or MokListRT\\): keeping the stock kernel"
expect_output "^mokutil: imported$"
expect_output "^new: CN ?= ?$subject$"
expect_output "^sync pending: kpack-kernel-hook: $version_re: .*a key enrolment is pending"
expect_output "^status: $version_re: stock; default: stock$"
expect_no_output '^grubenv: next_entry=kpack'

# ---- 1: MokManager enrols the key, typed at the console as a person would; then kpack signs --------

dir=$(step_dir 1-enrol)
cat > "$dir/step.sh" <<EOF
$secure_step
mokutil --list-enrolled | sed -n 's/^ *Subject: /enrolled: /p'
mokutil --test-key $cert | sed 's/^/test-key: /'
kpack-kernel-hook sync 2>&1 | sed 's/^/sync: /'
$report_step
EOF
# shim finds MokNew and starts MokManager, whose screens a person goes through so: any key within
# its 10 s; "Enroll MOK", the second item; "Continue", the item after "View key 0"; "Yes", the
# second answer to "Enroll the key(s)?"; the password mokutil was given; "Reboot", now the first item.
down='\x1b[B' enter='\r'
boot_typing 1-enrol \
    "wait:Press any key to perform MOK management" "keys: " \
    "wait:Enroll MOK" "sleep:1" "keys:$down$enter" \
    "wait:View key 0" "sleep:1" "keys:$down$enter" \
    "wait:Enroll the key" "wait:Yes" "sleep:1" "keys:$down$enter" \
    "wait:Password" "sleep:1" "keys:$password$enter" \
    "wait:Perform MOK management" "wait:Reboot" "sleep:1" "keys:$enter"
expect_boot "$version" absent "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^sb-state: SecureBoot enabled$"
expect_output "^booted entry: debian$"
expect_output "^enrolled: CN ?= ?$subject$"
expect_output "^test-key: .*is already enrolled"
expect_output "^sync: kpack-kernel-hook: $version_re: packed /boot/vmlinuz-$version_re "
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', trusted by this machine; trial: pending; next boot: packed, on trial; default: stock$"

# ---- 2: the packed kernel's trial boot, through shim, locked down --------------------------------

dir=$(step_dir 2-trial)
cat > "$dir/step.sh" <<EOF
$secure_step
kpack stats | sed 's/^/stats: /'
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
journalctl -k -b -o cat --no-pager | grep -i -e 'secure boot' -e lockdown | sed 's/^/kernel: /'
$report_step
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
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); signed by 'CN ?= ?$subject', trusted by this machine; trial: passed; default: packed$"
