# systemd-boot.sh — sourced by tests/debian/run.sh: the trial and full sequences on the uefi image
# under OVMF: systemd-boot on the ESP (/boot/efi), kernel-install's layout bls, boot counting with
# /etc/kernel/tries. Each step prints the entry systemd-boot booted (LoaderEntrySelected: the
# entry's file name as systemd-boot found it, a counted one's +TRIES before its renaming),
# kpack-kernel-hook status, the entries and their options; the assertions are on those lines and
# the kernel that booted.

token=$MACHINE_ID
esp=/boot/efi
entries=$esp/loader/entries
selected='echo "selected: $(cat /sys/firmware/efi/efivars/LoaderEntrySelected-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f | tail -c +5 | tr -d "\000")"'
report_step="kpack-kernel-hook status | sed 's/^/status: /'; ls $entries | sed 's/^/entry: /'; grep -H '^options' $entries/*.conf | sed 's,^$entries/,options: ,'"
# systemd-bless-boot runs once boot-complete.target is reached, maybe after the agent started: wait
# for the blessed (uncounted) entry of VERSION.
wait_blessed() { echo "for i in \$(seq 60); do [ -e $entries/$token-$1.conf ] && break; sleep 2; done"; }

# ---- 0: the stock system gets kpack; sync turns boot counting on ---------------------------------

dir=$(step_dir 0-install)
cp "$deb" "$dir/kpack.deb"
cat > "$dir/step.sh" <<STEP
$selected
# The image's first entry is named by make-image.sh's machine id, but mmdebstrap left
# /etc/machine-id uninitialized and systemd made another at the first boot: kernel-install takes
# the first entry's token, as on a machine whose entries it wrote.
echo $token > /etc/kernel/entry-token
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
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); systemd-boot: $token-$version_re\\+1.conf, stock entry $token-$version_re-stock.conf, trial: pending; default: packed$"
expect_output "^options: $token-$version_re\\+1.conf:options .* panic=5 kpack.trial$"
expect_no_output "^entry: $token-$version_re.conf$"

# ---- 1: the trial boot; systemd-bless-boot marks it good -----------------------------------------

dir=$(step_dir 1-trial)
cat > "$dir/step.sh" <<STEP
$selected
kpack stats | sed 's/^/stats: /'
$(wait_blessed "$version")
journalctl -b -u kpack-trial.service -u systemd-bless-boot.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
STEP
boot 1-trial
expect_boot "$version" present "$token-$version\\+1.conf" trial
expect_step_ok
expect_output "^stats: kpack run report: setup_data/[0-9]+ \\(version 1\\)$"
expect_output "^stats: entry: EFI PE; codec: lz4$"
expect_output "^journal: kpack-kernel-hook: $version_re: trial boot passed"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); systemd-boot: $token-$version_re.conf, stock entry $token-$version_re-stock.conf, trial: passed; default: packed$"
expect_no_output "^options: $token-$version_re.conf:.*kpack.trial"

# ---- 2: the blessed entry by default; a damaged image added on trial ------------------------------

dir=$(step_dir 2-default)
cat > "$dir/step.sh" <<STEP
$selected
kpack stats > /dev/null && echo "stats: record present"
$damage_step
kernel-install add \$(uname -r) "\$image"
$report_step
STEP
boot 2-default
expect_boot "$version" present "$token-$version.conf" default
expect_step_ok
expect_output "^stats: record present$"
expect_output "^damaged: byte [0-9]+, "
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); systemd-boot: $token-$version_re\\+1.conf, stock entry $token-$version_re-stock.conf, trial: pending; default: packed$"

# ---- 3: its trial fails in the stub; the next boot is the stock entry, unattended ---------------

dir=$(step_dir 3-failed)
cat > "$dir/step.sh" <<STEP
$selected
$report_step
STEP
boot_failing 3-failed
expect_boot "$version" absent "$token-$version-stock.conf" default
expect_step_ok
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); systemd-boot: $token-$version_re\\+0-1.conf, stock entry $token-$version_re-stock.conf, trial: failed; default: stock$"

[[ $sequence == full ]] || return 0

# ---- 4: a second kernel version installed by apt: packed, its entry on trial ----------------------

install_second_kernel_step "$selected"
expect_boot "$version" absent "$token-$version-stock.conf" default
expect_step_ok
expect_output "kpack-kernel-hook: $version2_re: packed /boot/vmlinuz-$version2_re "
expect_output "^status: $version2_re: kpack image \\(stock in $stock/vmlinuz-$version2_re\\); systemd-boot: $token-$version2_re\\+1.conf, stock entry $token-$version2_re-stock.conf, trial: pending; default: packed$"
expect_output "^options: $token-$version2_re\\+1.conf:options .* panic=5 kpack.trial$"

# ---- 5: its trial passes; kpack is purged -------------------------------------------------------

dir=$(step_dir 5-purge)
cat > "$dir/step.sh" <<STEP
$selected
kpack stats > /dev/null && echo "stats: record present"
$(wait_blessed "$version2")
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
apt-get purge -y kpack
# Each kernel its package's, byte for byte.
$(verify_kernels_lines "$version" "$version2")
# Each entry's kernel is its package's again.
for linux in $esp/$token/*/linux; do
    v=\$(basename "\$(dirname "\$linux")")
    cmp -s "\$linux" /boot/vmlinuz-\$v && echo "esp: \$v stock"
done
[ -e /boot/kpack ] || echo "gone: /boot/kpack"
[ -e /etc/kernel/tries ] || echo "gone: /etc/kernel/tries"
ls $esp/$token/*/ | sed 's/^/esp file: /'
ls $entries | sed 's/^/entry after purge: /'
grep -c 'kpack' $entries/*.conf | sed 's/^/kpack lines: /'
STEP
boot 5-purge
expect_boot "$version2" present "$token-$version2_re\\+1.conf" trial
expect_step_ok
expect_output "^stats: record present$"
expect_output "^journal: kpack-kernel-hook: $version2_re: trial boot passed"
expect_output "^status: $version2_re: kpack image \\(stock in $stock/vmlinuz-$version2_re\\); systemd-boot: $token-$version2_re.conf, stock entry $token-$version2_re-stock.conf, trial: passed; default: packed$"
expect_output "^verify: linux-image-$version_re unchanged$"
expect_output "^verify: linux-image-$version2_re unchanged$"
expect_no_output "^dpkg-verify: .* (/boot/|/usr/lib/modules/.*/vmlinuz)"
expect_output "^esp: $version_re stock$"
expect_output "^esp: $version2_re stock$"
expect_output "^gone: /boot/kpack$"
expect_output "^gone: /etc/kernel/tries$"
expect_no_output '^esp file: linux-stock$'
expect_no_output '^entry after purge: .*-stock\.conf$'
expect_no_output '^kpack lines: .*:[1-9]'

# ---- 6: stock, the newest kernel ---------------------------------------------------------------

dir=$(step_dir 6-stock)
cat > "$dir/step.sh" <<STEP
$selected
command -v kpack || echo "kpack: not installed"
STEP
boot 6-stock
expect_boot "$version2" absent "$token-$version2_re.conf" default
expect_step_ok
expect_output "^kpack: not installed$"
