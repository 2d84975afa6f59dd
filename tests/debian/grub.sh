# grub.sh — sourced by tests/debian/run.sh: the trial and full sequences on the bios image, GRUB
# in its MBR. Each step's output ends with what kpack-kernel-hook status and GRUB's environment
# block say; the assertions are on those lines, the kernel that booted and GRUB's BOOT_IMAGE.

report_step='kpack-kernel-hook status | sed "s/^/status: /"; grub-editenv /boot/grub/grubenv list | sed "s/^/grubenv: /"'

# ---- 0: the stock system gets kpack -------------------------------------------------------------

dir=$(step_dir 0-install)
cp "$deb" "$dir/kpack.deb"
install_more=
[[ $sequence == kdump ]] && install_more=$(kdump_install_lines "$dir")
cat > "$dir/step.sh" <<EOF
update-grub
apt-get install -y --no-install-recommends ./kpack.deb
sed -i 's/^KPACK_HOOK=no/KPACK_HOOK=yes/' /etc/default/kpack
kpack-kernel-hook sync
$install_more
systemctl is-enabled kpack-trial.service | sed 's/^/unit: /'
$report_step
EOF
boot 0-install
expect_boot "$version" absent "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^unit: enabled$"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); trial: pending; next boot: packed, on trial; default: stock$"
expect_output "^grubenv: next_entry=kpack-trial>kpack-trial-$version_re$"
expect_output "^grubenv: saved_entry=kpack-stock>kpack-stock-$version_re$"
if [[ $sequence == kdump ]]; then
    kdump_installed
    kdump_crash 1-kdump "" ""
    return 0
fi

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
expect_output "^journal: kpack-kernel-hook: $version_re: trial boot passed"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); trial: passed; default: packed$"

# ---- 2: packed by default; a damaged image put on trial --------------------------------------------

dir=$(step_dir 2-default)
cat > "$dir/step.sh" <<EOF
kpack stats > /dev/null && echo "stats: record present"
$damage_step
kpack-kernel-hook trial \$(uname -r)
$report_step
EOF
boot 2-default
expect_boot "$version" present "/boot/vmlinuz-$version" default
expect_step_ok
expect_output "^stats: record present$"
expect_output "^damaged: byte [0-9]+, "
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); trial: pending; next boot: packed, on trial; default: stock$"

# ---- 3: the damaged image's trial fails; the next boot is stock, unattended --------------------

dir=$(step_dir 3-failed)
cat > "$dir/step.sh" <<EOF
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
EOF
boot_failing 3-failed
expect_boot "$version" absent "$stock/vmlinuz-$version" default
expect_step_ok
expect_output "^journal: kpack-kernel-hook: $version_re: trial boot failed \\(this boot is $version_re, stock\\)"
expect_output "^status: $version_re: kpack image \\(stock in $stock/vmlinuz-$version_re\\); trial: failed; default: stock$"
expect_no_output '^grubenv: next_entry=kpack'

[[ $sequence == full ]] || return 0

# ---- 4: a second kernel version installed by apt: packed, on trial ------------------------------

install_second_kernel_step
expect_boot "$version" absent "$stock/vmlinuz-$version" default
expect_step_ok
expect_output "kpack-kernel-hook: $version2_re: packed /boot/vmlinuz-$version2_re "
expect_output "^status: $version2_re: kpack image \\(stock in $stock/vmlinuz-$version2_re\\); trial: pending; next boot: packed, on trial; default: stock$"

# ---- 5: its trial passes; kpack is purged -------------------------------------------------------

dir=$(step_dir 5-purge)
cat > "$dir/step.sh" <<EOF
kpack stats > /dev/null && echo "stats: record present"
journalctl -b -u kpack-trial.service -o cat --no-pager | sed 's/^/journal: /'
$report_step
apt-get purge -y kpack
# Each kernel its package's, byte for byte.
$(verify_kernels_lines "$version" "$version2")
[ -e /boot/kpack ] || echo "gone: /boot/kpack"
grep -c kpack /boot/grub/grub.cfg | sed 's/^/grub.cfg kpack lines: /'
grub-editenv /boot/grub/grubenv list | sed 's/^/grubenv after the purge: /'
EOF
boot 5-purge
expect_boot "$version2" present "/boot/vmlinuz-$version2" trial
expect_step_ok
expect_output "^stats: record present$"
expect_output "^journal: kpack-kernel-hook: $version2_re: trial boot passed"
expect_output "^status: $version2_re: kpack image \\(stock in $stock/vmlinuz-$version2_re\\); trial: passed; default: packed$"
expect_output "^grubenv: saved_entry=kpack-packed>kpack-packed-$version2_re$"
expect_output "^verify: linux-image-$version_re unchanged$"
expect_output "^verify: linux-image-$version2_re unchanged$"
expect_no_output "^dpkg-verify: .* (/boot/|/usr/lib/modules/.*/vmlinuz)"
expect_output "^gone: /boot/kpack$"
expect_output "^grub.cfg kpack lines: 0$"
expect_no_output '^grubenv after the purge: .*kpack'

# ---- 6: stock, the newest kernel ---------------------------------------------------------------

dir=$(step_dir 6-stock)
echo 'command -v kpack || echo "kpack: not installed"' > "$dir/step.sh"
boot 6-stock
expect_boot "$version2" absent "/boot/vmlinuz-$version2" default
expect_step_ok
expect_output "^kpack: not installed$"
