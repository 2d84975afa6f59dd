# systemd-boot.sh — sourced by trial.sh for its systemd-boot case (see there): kernel-install into
# an ESP directory of the staging root, systemd-boot's order read by its own bootctl, boots and
# blessings played as systemd-boot and systemd-bless-boot play them. Uses trial.sh's $stage, $work,
# $version, $old, $here, fail, step and is_kpack_image.

# bootctl from Debian's systemd-boot package of this machine's systemd version, unpacked into the
# cache: the package itself is not installed here, since its postinst would install systemd-boot
# into this machine's ESP.
systemd_version=$(dpkg-query -W -f '${Version}' systemd)
sdboot_dir=${KPACK_CACHE:-$HOME/.cache/kpack}/systemd-boot_$systemd_version
bootctl_bin=$sdboot_dir/usr/bin/bootctl
if [[ ! -x $bootctl_bin ]]; then
    rm -rf "$sdboot_dir.tmp"
    mkdir -p "$sdboot_dir.tmp"
    (cd "$sdboot_dir.tmp" && apt-get download "systemd-boot=$systemd_version") > "$work/apt-download.log" 2>&1 \
        || { cat "$work/apt-download.log" >&2; fail "apt-get download systemd-boot=$systemd_version failed"; }
    dpkg-deb -x "$sdboot_dir.tmp"/systemd-boot_*.deb "$sdboot_dir.tmp" || fail "cannot unpack systemd-boot's package"
    rm -f "$sdboot_dir.tmp"/*.deb
    rm -rf "$sdboot_dir"
    mv "$sdboot_dir.tmp" "$sdboot_dir"
fi

esp=$stage/efi
entries=$esp/loader/entries
conf=$stage/etc/kernel
machine_id=0123456789abcdef0123456789abcdef
mkdir -p "$entries"
echo layout=bls > "$conf/install.conf"
echo "console=ttyS0" > "$conf/cmdline"
echo 1 > "$conf/tries"
export KPACK_ROOT=$stage KPACK_BIN=$stage/usr/bin/kpack KPACK_HOOK_PROGRAM=$stage/usr/sbin/kpack-kernel-hook
export KPACK_EFIVARS=$work/efivars KPACK_BOOT_ROOT=$esp
# A UEFI machine's mounted efivarfs: systemd-boot's LoaderInfo, no SecureBoot variable (firmware
# without Secure Boot, so the hook packs unsigned).
mkdir -p "$KPACK_EFIVARS"
printf '\x06\x00\x00\x00s\x00d\x00\x00\x00' > "$KPACK_EFIVARS/LoaderInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
hook=$KPACK_HOOK_PROGRAM
configure() { sed -i "s|^$1=.*|$1=$2|" "$stage/etc/default/kpack"; }

kernel_install() {
    BOOT_ROOT=$esp KERNEL_INSTALL_CONF_ROOT=$conf MACHINE_ID=$machine_id \
    KERNEL_INSTALL_PLUGINS="/usr/lib/kernel/install.d/90-loaderentry.install $stage/usr/lib/kernel/install.d/91-kpack.install" \
        kernel-install "$@" > "$work/kernel-install.log" 2>&1 \
        || { cat "$work/kernel-install.log" >&2; fail "kernel-install $* failed"; }
    cat "$work/kernel-install.log"
}

# systemd-boot's view: bootctl list (no EFI variables: what systemd-boot boots with no one-shot or
# saved choice), in a mount namespace where the ESP directory is a mount point.
bootctl_list() {
    unshare -m sh -c 'mount --bind "$1" "$1" && SYSTEMD_RELAX_ESP_CHECKS=1 "$2" --esp-path="$1" --no-variables --no-pager list' \
        sh "$esp" "$bootctl_bin" 2> "$work/bootctl.err" || { cat "$work/bootctl.err" >&2; fail "bootctl list failed"; }
}
# The entries' file names in systemd-boot's order; the first is the default.
order() { bootctl_list | awk '/^ *source: / { n = split($2, p, "/"); printf "%s%s", sep, p[n]; sep = " " }'; }
expect_order() {
    local got; got=$(order)
    [[ $got == "$1" ]] || fail "systemd-boot's order is '$got', expected '$1'"
    grep -q "/${1%% *}\$" <<< "$(bootctl_list | awk '/\(default\)/ { d = 1 } d && /^ *source: / && !p { print; p = 1 }')" \
        || fail "bootctl's default is not ${1%% *}"
    echo "trial.sh (systemd-boot): order: $got"
}
packed() { echo "$machine_id-$1${2:-}.conf"; }   # VERSION [COUNTER]
stock() { echo "$machine_id-$1-stock.conf"; }
# The entry's kernel: ENTRY-TOKEN/VERSION/linux under the ESP (the path in the entry is from the
# ESP's mount point, here the host's /).
linux_of() { echo "$esp/$(sed -n 's/^linux *//p' "$entries/$1" | awk -F/ '{ print $(NF-2) "/" $(NF-1) "/" $NF }')"; }
options_of() { sed -n 's/^options *//p' "$entries/$1"; }
# expect_entry FILE packed|stock [trial]: the entry boots a kpack image or the stock kernel, with the
# trial's options or without.
expect_entry() {
    local file=$1 kind=$2 trial=${3:-}
    [[ -f $entries/$file ]] || fail "no loader entry $file (entries: $(ls "$entries" | tr '\n' ' '))"
    case $kind in
        packed) is_kpack_image "$(linux_of "$file")" || fail "$file: $(linux_of "$file") is not a kpack image" ;;
        stock) cmp -s "$(linux_of "$file")" "$work/stock" || fail "$file: $(linux_of "$file") is not the stock kernel" ;;
    esac
    if [[ -n $trial ]]; then
        [[ " $(options_of "$file") " == *" panic=5 kpack.trial "* ]] || fail "$file: no panic=5 kpack.trial: $(options_of "$file")"
    else
        [[ " $(options_of "$file") " != *" kpack.trial "* ]] || fail "$file: kpack.trial left: $(options_of "$file")"
    fi
}
# A boot as systemd-boot makes it: the default entry's counter counted down and up (+LEFT-DONE),
# LoaderBootCountPath naming it. Sets $booted_entry.
boot_default() {
    local file base left done
    file=$(order); file=${file%% *}
    if [[ $file =~ ^(.*)\+([0-9]+)(-([0-9]+))?\.conf$ ]]; then
        base=${BASH_REMATCH[1]} left=${BASH_REMATCH[2]} done=${BASH_REMATCH[4]:-0}
        booted_entry="$base+$((left - 1))-$((done + 1)).conf"
        mv "$entries/$file" "$entries/$booted_entry"
        { printf '\x06\x00\x00\x00'; printf '%s' "\\loader\\entries\\$booted_entry" | iconv -t UTF-16LE; printf '\x00\x00'; } \
            > "$KPACK_EFIVARS/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
    else
        booted_entry=$file
        rm -f "$KPACK_EFIVARS/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
    fi
}
# check VERSION packed|stock: kpack-trial.service's `kpack-kernel-hook boot` in that boot; its
# status in $check_status. Then systemd-bless-boot, which runs only once boot-complete.target is
# reached (the check succeeded): the counted entry renamed good.
check() {
    mkdir -p "$work/setup_data-$2"
    if [[ $2 == packed ]]; then
        mkdir -p "$work/setup_data-packed/1"
        echo 0x6b70616b > "$work/setup_data-packed/1/type"
        { printf 'kpackRUN\x01\x00\x00\x00\x30\x01\x00\x00'; head -c 288 /dev/zero; } > "$work/setup_data-packed/1/data"
    fi
    check_status=0
    KPACK_BOOTED=$1 KPACK_SETUP_DATA=$work/setup_data-$2 "$hook" boot > "$work/boot.log" 2>&1 || check_status=$?
    cat "$work/boot.log"
    if [[ $check_status -eq 0 && $booted_entry =~ ^(.*)\+[0-9]+(-[0-9]+)?\.conf$ ]]; then
        mv "$entries/$booted_entry" "$entries/${BASH_REMATCH[1]}.conf"
    fi
}
expect_status() {
    local line; line=$("$hook" status | grep "^$1: ") || fail "status lists no $1"
    [[ $line == "$2" ]] || fail "status: '$line', expected '$2'"
}

step "packed, pending: KPACK_HOOK=yes, kernel-install add of two kernels"
configure KPACK_HOOK yes
kernel_install add "$old" "$stage/boot/vmlinuz-$old"
kernel_install add "$version" "$stage/boot/vmlinuz-$version"
grep -q "^kpack-kernel-hook: $version: stock entry $entries/$(stock "$version"); $(packed "$version" +1) boots on trial" "$work/kernel-install.log" \
    || fail "the plugin did not say it wrote the stock entry"
expect_entry "$(packed "$version" +1)" packed trial
expect_entry "$(stock "$version")" stock
expect_entry "$(packed "$old" +1)" packed trial
expect_entry "$(stock "$old")" stock
cmp -s "$stage/boot/vmlinuz-$version" "$work/stock" || fail "kernel-install's plugin changed the package's own kernel"
expect_order "$(packed "$version" +1) $(stock "$version") $(packed "$old" +1) $(stock "$old")"
expect_status "$version" "$version: stock; systemd-boot: $(packed "$version" +1), stock entry $(stock "$version"), trial: pending; default: packed"

step "failed: the trial boot has no kpack run report"
boot_default
[[ $booted_entry == "$(packed "$version" +0-1)" ]] || fail "systemd-boot booted $booted_entry"
check "$version" stock
[[ $check_status -ne 0 ]] || fail "the boot check passed a trial boot without the run report"
grep -q "^kpack-kernel-hook: $version: trial boot failed" "$work/boot.log" || fail "the boot check did not say the trial failed"
expect_order "$(stock "$version") $(packed "$old" +1) $(stock "$old") $(packed "$version" +0-1)"
expect_entry "$(stock "$version")" stock
expect_status "$version" "$version: stock; systemd-boot: $(packed "$version" +0-1), stock entry $(stock "$version"), trial: failed; default: stock"
# The stock boot that follows is not counted: nothing to check, nothing to bless.
boot_default
check "$version" stock
[[ $check_status -eq 0 && ! -s $work/boot.log ]] || fail "the stock boot's check said: $(cat "$work/boot.log")"

step "pending again: kernel-install add of the same kernel"
kernel_install add "$version" "$stage/boot/vmlinuz-$version"
[[ ! -e $entries/$(packed "$version" +0-1) ]] || fail "the bad entry of the previous image remains"
expect_entry "$(packed "$version" +1)" packed trial
expect_order "$(packed "$version" +1) $(stock "$version") $(packed "$old" +1) $(stock "$old")"

step "passed: the trial boot has the run report; systemd-bless-boot blesses it"
boot_default
check "$version" packed
[[ $check_status -eq 0 ]] || fail "the boot check failed a trial boot with the run report"
grep -q "^kpack-kernel-hook: $version: trial boot passed" "$work/boot.log" || fail "the boot check did not pass the trial"
expect_entry "$(packed "$version")" packed
expect_order "$(packed "$version") $(stock "$version") $(packed "$old" +1) $(stock "$old")"
expect_status "$version" "$version: stock; systemd-boot: $(packed "$version"), stock entry $(stock "$version"), trial: passed; default: packed"

step "restored: KPACK_HOOK=no, kernel-install add of both kernels"
configure KPACK_HOOK no
rm "$entries/$(packed "$version")"   # kernel-install would leave it beside the new one
kernel_install add "$version" "$stage/boot/vmlinuz-$version"
kernel_install add "$old" "$stage/boot/vmlinuz-$old"
expect_entry "$(packed "$version" +1)" stock
expect_entry "$(packed "$old" +1)" stock
[[ -z $(find "$esp" -name '*-stock.conf' -o -name linux-stock) ]] || fail "stock entries remain with the hook off: $(find "$esp" -name '*stock*')"
expect_order "$(packed "$version" +1) $(packed "$old" +1)"

step "purged: on again, then kpack's removal (restore, the plugin and hook gone)"
configure KPACK_HOOK yes
kernel_install add "$version" "$stage/boot/vmlinuz-$version"
kernel_install add "$old" "$stage/boot/vmlinuz-$old"
expect_entry "$(packed "$version" +1)" packed trial
"$hook" restore
rm "$hook" "$stage/usr/lib/kernel/install.d/91-kpack.install"
expect_entry "$(packed "$version" +1)" stock
expect_entry "$(packed "$old" +1)" stock
[[ -z $(find "$esp" -name '*-stock.conf' -o -name linux-stock) ]] || fail "stock entries remain after the removal: $(find "$esp" -name '*stock*')"
expect_order "$(packed "$version" +1) $(packed "$old" +1)"
