#!/usr/bin/env bash
# trial.sh BUILD_DIR grub|systemd-boot — the kernel hook's trial boots, state by state, in a staging
# root (never the machine's own /boot or /etc).
#
# grub: kpack installed as hook.sh installs it, Debian's kernel
# package unpacked, an older and a newer kernel beside it (the same kernel under other versions'
# names), a GRUB menu made by the real /etc/grub.d/00_header and 10_linux and the root's own
# /etc/grub.d/11_kpack with /etc/default/grub and the root's /etc/default/grub.d/kpack.cfg (what
# update-grub would run; KPACK_UPDATE_GRUB points the hook at it), and GRUB's environment block
# written by the real grub-reboot, grub-set-default and grub-editenv.
#
# After each transition the test reads the generated grub.cfg and grubenv as GRUB does: what the
# next boot boots (next_entry, else GRUB_DEFAULT/saved_entry, by id, title or number, through
# submenus), what the boot after it boots (GRUB clears next_entry as it reads the menu), and what
# `fallback` boots; and it requires at least one menu entry that boots a stock kernel (the file
# byte for byte the package's, its initrd there). A boot is played by clearing next_entry (as GRUB
# does) and running `kpack-kernel-hook boot` with KPACK_BOOTED (uname -r) and KPACK_SETUP_DATA: a
# directory holding a kpack run report (setup_data type 0x6b70616b, as the stub leaves it) for a
# boot through a kpack image, an empty one for a stock boot.
#
#   packed    KPACK_HOOK=yes, the kernel package's postinst hooks: the kernel is packed, and
#   pending   its trial is armed: next boot the trial entry (the packed image, panic=5 kpack.trial),
#             the boot after and the fallback the stock kernel
#   failed    that boot came up stock: trial failed, the stock kernel stays the default
#   pending   `kpack-kernel-hook trial VERSION` arms it again
#   passed    that boot came up packed with the run report: the packed kernel (11_kpack's packed
#             entry, which loads the stock kernel with kpack.refused when GRUB cannot load the
#             image) is the default; `sync` repacks the same image and keeps it passed; it keeps the
#             older kernel stock (only the menu boots it, where nothing would catch a failure)
#   refused   a boot with kpack.refused (GRUB could not load the packed default): the trial fails
#             and the stock kernel is the default; tried again, passed again
#   older     `kpack-kernel-hook trial OLD` packs the older kernel and arms its trial; that boot
#             passes it, and `sync` keeps it packed
#   pending   a newer kernel installed: packed and on trial, its stock kernel the default
#   restored  KPACK_HOOK=no and sync: every kernel stock, no kpack entry or setting left in GRUB
#   purged    on again, then kpack's removal (restore, the hook program gone, the menu made again):
#             every kernel stock, GRUB_DEFAULT back to 0, nothing of kpack in grub.cfg or grubenv
#
# systemd-boot: the same root with systemd's kernel-install (layout bls, /etc/kernel/tries 1) and
# its plugins 90-loaderentry and kpack's 91-kpack into an ESP directory; the entries' order and
# default read by systemd-boot's own bootctl (Debian's systemd-boot package, unpacked from its .deb
# into the cache, run in a private mount namespace where the ESP directory is a mount point, as
# bootctl requires). A boot is played as systemd-boot plays it (the entry's counter renamed +0-1,
# LoaderBootCountPath set) and systemd-bless-boot after it (renamed good, if kpack-trial.service,
# `kpack-kernel-hook boot`, succeeded).
#   packed, pending   KPACK_HOOK=yes, kernel-install add: the entry's kernel is packed, its entry
#             counted (+1) with panic=5 kpack.trial, a stock entry (linux-stock, the stock kernel)
#             beside it; bootctl: the packed entry is the default, the stock one next
#   failed    the trial boot has no run report: the boot check fails (no blessing); bootctl: the
#             stock entry is the default, the packed one last
#   pending   kernel-install add again: one counted entry, the bad one gone
#   passed    the trial boot has the run report: the check passes and drops panic=5 kpack.trial; after
#             the blessing the packed entry is the default, uncounted, the stock one next
#   restored  KPACK_HOOK=no, kernel-install add: the entry's kernel stock, no stock entry
#   purged    on again, then kpack's removal (restore; the plugin gone): every entry's kernel stock,
#             no stock entry, no trial options
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR grub|systemd-boot" >&2; exit 2; }
build=$(realpath "$1") case=$2
case $case in grub|systemd-boot) ;; *) echo "trial.sh: unknown case '$case'" >&2; exit 2 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../boot/fixture.sh"
boot_fixture "$build/boot"

fail() { echo "trial.sh ($case): FAIL: $*" >&2; exit 1; }
step() { echo "trial.sh ($case): --- $*"; }

work=$build/install/trial-$case
rm -rf "$work"
mkdir -p "$work"
stage=$work/root
DESTDIR=$stage cmake --install "$build" --prefix /usr > /dev/null
DESTDIR=$stage cmake --install "$build" --prefix /usr --component kernel-hooks > /dev/null
kernel_deb=$(dirname "$(dirname "$vmlinuz")").deb
[[ -s $kernel_deb ]] || fail "$kernel_deb: the kernel package is missing"
dpkg-deb -x "$kernel_deb" "$stage"
dpkg-deb -e "$kernel_deb" "$work/control"
version=$(sed -n 's/^version=//p' "$work/control/postinst")
[[ -n $version ]] || fail "$work/control/postinst: no version= line"
cp "$stage/boot/vmlinuz-$version" "$work/stock"
# Initramfs-tools would have made these; any file does for GRUB's menu.
cp "$initrd" "$stage/boot/initrd.img-$version"
old=${version/-57-/-56-} new=${version/-57-/-58-}
[[ $old != "$version" ]] || { old=6.1.0-1-test; new=9.9.9-1-test; }
add_kernel() {
    cp -p "$work/stock" "$stage/boot/vmlinuz-$1"
    cp -p "$stage/boot/config-$version" "$stage/boot/config-$1"
    cp -p "$initrd" "$stage/boot/initrd.img-$1"
}
add_kernel "$old"
is_kpack_image() { local info; info=$("$stage/usr/bin/kpack" info "$1") && [[ ${info%%$'\n'*} == *': kpack image, '* ]]; }

if [[ $case == systemd-boot ]]; then
    source "$here/systemd-boot.sh"
    echo "trial.sh ($case): PASS"
    rm -rf "$stage"
    exit 0
fi

export KPACK_ROOT=$stage KPACK_BIN=$stage/usr/bin/kpack KPACK_HOOK_PROGRAM=$stage/usr/sbin/kpack-kernel-hook
# A machine without UEFI: sysfs's firmware directory without efi/ (no Secure Boot).
export KPACK_EFIVARS=$work/firmware/efi/efivars KPACK_UPDATE_GRUB=$work/update-grub
mkdir -p "$work/firmware"
hook=$KPACK_HOOK_PROGRAM
grubcfg=$stage/boot/grub/grub.cfg grubenv=$stage/boot/grub/grubenv
configure() { sed -i "s|^$1=.*|$1=$2|" "$stage/etc/default/kpack"; }

# ---- GRUB as update-grub would make it for this root -------------------------------------------

mkdir -p "$stage/boot/grub"
sed -e 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0"/' /usr/share/grub/default/grub \
    > "$stage/etc/default/grub"
sed "s#for i in /boot/vmlinuz-\* /vmlinuz-\* /boot/kernel-\* ; do#for i in $stage/boot/vmlinuz-* ; do#" \
    /etc/grub.d/10_linux > "$work/10_linux"
grep -q "in $stage/boot/vmlinuz-" "$work/10_linux" || fail "/etc/grub.d/10_linux: its kernel glob changed, cannot point it into the root"
rel=$(grub-mkrelpath "$stage/boot")
cat > "$work/update-grub" <<EOF
#!/bin/sh
# update-grub for $stage: grub-mkconfig's settings and scripts, the root's own where kpack has some.
set -e
. "$stage/etc/default/grub"
for cfg in "$stage"/etc/default/grub.d/*.cfg; do [ -e "\$cfg" ] && . "\$cfg"; done
export GRUB_DEFAULT GRUB_TIMEOUT GRUB_DISTRIBUTOR GRUB_CMDLINE_LINUX GRUB_CMDLINE_LINUX_DEFAULT GRUB_SAVEDEFAULT
export GRUB_DEVICE=/dev/vda1 GRUB_DEVICE_BOOT=/dev/vda1 GRUB_DEVICE_UUID=0d3c7a3e-1f0e-4b5e-9d6a-6b1e2f3a4b5c GRUB_FS=ext4
export GRUB_TERMINAL_INPUT=serial GRUB_TERMINAL_OUTPUT=serial GRUB_DISABLE_RECOVERY=true pkgdatadir=/usr/share/grub
{
    sh /etc/grub.d/00_header
    sh "$work/10_linux"
    [ ! -x "$stage/etc/grub.d/11_kpack" ] || sh "$stage/etc/grub.d/11_kpack"
} > "$work/grub.cfg.new" 2> "$work/update-grub.log"
sed "s#$rel/#/boot/#g" "$work/grub.cfg.new" > "$grubcfg"
# What GRUB would refuse to parse (the trial entry's if/else among it) fails here.
grub-script-check "$grubcfg"
EOF
chmod +x "$work/update-grub"
"$work/update-grub"

# ---- reading the menu as GRUB does --------------------------------------------------------------

# Every entry of grub.cfg, one line each: "PATH-BY-NUMBER<TAB>PATH-BY-ID<TAB>PATH-BY-TITLE<TAB>LINUX"
# with > between the levels (submenu>entry); submenus have their own line with an empty LINUX.
entries() {
    awk -v q="'" '
        function field(line, n,   parts) { split(line, parts, q); return parts[n] }
        /^[ \t]*(menuentry|submenu) / {
            depth++; index_at[depth] = count[depth - 1]++; count[depth] = 0
            title[depth] = field($0, 2)
            id[depth] = ""; if (match($0, /\$menuentry_id_option '\''[^'\'']*'\''/)) id[depth] = substr($0, RSTART + 22, RLENGTH - 23)
            submenu[depth] = ($1 == "submenu"); linux[depth] = ""
            next
        }
        # The first linux line: a trial entry has a second one, the stock kernel GRUB loads when
        # it cannot load the packed one (refused_boot).
        depth > 0 && linux[depth] == "" && /^[ \t]*(if[ \t]+)?linux[ \t]/ {
            sub(/^[ \t]*(if[ \t]+)?linux[ \t]+/, ""); sub(/; then$/, ""); linux[depth] = $0
        }
        depth > 0 && /^[ \t]*}[ \t]*$/ {
            n = ""; i = ""; t = ""
            for (d = 1; d <= depth; d++) { sep = (d > 1 ? ">" : ""); n = n sep index_at[d]; i = i sep id[d]; t = t sep title[d] }
            print n "\t" i "\t" t "\t" linux[depth]
            depth--
        }' "$grubcfg"
}
# refused_boot KIND VERSION: the linux line of VERSION's KIND (trial or packed) entry that GRUB
# runs when it cannot load the packed image (its else branch).
refused_boot() {
    awk -v id="'kpack-$1-$2'" '
        index($0, id) { inside = 1 }
        inside && /^[ \t]*else[ \t]*$/ { branch = 1; next }
        inside && branch && /^[ \t]*linux[ \t]/ { sub(/^[ \t]*linux[ \t]+/, ""); print; exit }
        inside && /^[ \t]*}[ \t]*$/ { exit }' "$grubcfg"
}
env_value() { grub-editenv "$grubenv" list 2>/dev/null | sed -n "s/^$1=//p"; }

# resolve SPEC: the linux line GRUB boots for default=SPEC (an entry number, id or title at each
# level): GRUB picks the first entry at a level where SPEC names none, and a submenu it enters
# takes the rest of SPEC as its own default.
resolve() {
    local spec=$1 path="" level part match
    local all
    all=$(entries)
    for level in 1 2; do
        part=${spec%%>*}
        [[ $spec == *">"* ]] && spec=${spec#*>} || spec=
        match=$(awk -F'\t' -v level=$level -v path="$path" -v part="$part" '
            { n = split($1, nums, ">"); split($2, ids, ">"); split($3, titles, ">") }
            n == level && index($1, path) == 1 && (nums[level] == part || ids[level] == part || titles[level] == part) { print $1; exit }
        ' <<< "$all")
        [[ -n $match ]] || match=${path}0
        if awk -F'\t' -v e="$match" '$1 == e && $4 != "" { found = 1 } END { exit !found }' <<< "$all"; then
            awk -F'\t' -v e="$match" '$1 == e { print $4 }' <<< "$all"
            return 0
        fi
        path="$match>"
    done
    fail "default '$1' resolves to no entry that boots a kernel"
}
# What GRUB's default is without next_entry: 00_header's "set default=" line, ${saved_entry} read
# from grubenv.
grub_default() {
    local value
    value=$(sed -n '/^if \[ "\${next_entry}" \] ; then/,/^fi/{s/^ *set default="\(.*\)"$/\1/p}' "$grubcfg" | grep -v next_entry)
    [[ $value == '${saved_entry}' ]] && value=$(env_value saved_entry)
    echo "${value:-0}"
}
next_boot() { local next; next=$(env_value next_entry); resolve "${next:-$(grub_default)}"; }
boot_after() { resolve "$(grub_default)"; }
fallback_boot() {
    local fallback
    fallback=$(sed -n 's/^set fallback=//p' "$grubcfg")
    [[ -n $fallback ]] || fail "grub.cfg sets no fallback"
    # GRUB runs the fallback as a top-level entry: a submenu there would boot nothing.
    [[ $fallback != *">"* ]] && awk -F'\t' -v id="$fallback" '$2 == id && $4 != "" { found = 1 } END { exit !found }' <<< "$(entries)" \
        || fail "fallback '$fallback' is not a top-level entry that boots a kernel"
    resolve "$fallback"
}

# expect_linux WHAT LINE FILE [ARGS...]: the linux line LINE loads FILE (a path on the root) with
# ARGS among its words; FILE is stock when stock, a kpack image when packed.
expect_linux() {
    local what=$1 line=$2 file=$3 kind=$4; shift 4
    [[ ${line%% *} == "$file" ]] || fail "$what boots '${line%% *}', not $file"
    for word in "$@"; do [[ " $line " == *" $word "* ]] || fail "$what: '$word' missing from: $line"; done
    case $kind in
        stock) cmp -s "$stage$file" "$work/stock" || fail "$what: $file is not the stock kernel" ;;
        packed) is_kpack_image "$stage$file" || fail "$what: $file is not a kpack image" ;;
    esac
    if [[ $kind == stock ]]; then
        for word in panic=5 kpack.trial; do [[ " $line " != *" $word "* ]] || fail "$what: the stock entry has $word"; done
    fi
}
# At least one entry boots a stock kernel with its initrd (and says which: the newest such one).
stock_entry() {
    local line file found=
    while IFS=$'\t' read -r _ _ _ line; do
        file=${line%% *}
        [[ -n $file && -f $stage$file ]] && cmp -s "$stage$file" "$work/stock" || continue
        local v=${file##*/vmlinuz-}
        grep -q "initrd.*/boot/initrd.img-$v\$" "$grubcfg" && [[ -f $stage/boot/initrd.img-$v ]] || continue
        found=$file
        break
    done < <(entries)
    [[ -n $found ]] || fail "no menu entry boots a stock kernel"
    echo "trial.sh ($case): a stock entry: $found"
}
status_of() { "$hook" status | grep "^$1: " || fail "status lists no $1"; }
expect_status() {
    local line; line=$(status_of "$1")
    [[ $line == "$2" ]] || fail "status: '$line', expected '$2'"
}
# play_boot VERSION packed|stock [CMDLINE]: GRUB read its menu (next_entry cleared) and booted
# VERSION with that command line.
play_boot() {
    grub-editenv "$grubenv" unset next_entry
    mkdir -p "$work/setup_data-$2"
    if [[ $2 == packed ]]; then
        mkdir -p "$work/setup_data-packed/1"
        echo 0x6b70616b > "$work/setup_data-packed/1/type"
        # A version 1 run report: magic, version, size (304), then zeros (no phases).
        { printf 'kpackRUN\x01\x00\x00\x00\x30\x01\x00\x00'; head -c 288 /dev/zero; } > "$work/setup_data-packed/1/data"
        "$KPACK_BIN" stats --from "$work/setup_data-packed" > /dev/null || fail "kpack stats does not read the test's run report"
    fi
    KPACK_BOOTED=$1 KPACK_SETUP_DATA=$work/setup_data-$2 KPACK_CMDLINE=${3:-root=/dev/vda1 ro} "$hook" boot 2>&1 \
        | tee "$work/boot.log"
}
stock_v() { echo "/boot/kpack/stock/vmlinuz-$1"; }
none_of_kpack() {
    ! grep -q kpack "$grubcfg" || fail "grub.cfg still mentions kpack: $(grep -m1 kpack "$grubcfg")"
    ! grep -q kpack <<< "$(grub-editenv "$grubenv" list)" || fail "grubenv still holds kpack's entries: $(grub-editenv "$grubenv" list | tr '\n' ' ')"
}

# ---- the states ---------------------------------------------------------------------------------

step "before: the hook off, GRUB boots its first entry, the newest kernel, stock"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" stock
none_of_kpack
grep -q '^   set default="0"$' "$grubcfg" || fail "GRUB_DEFAULT is not 0 with the hook off"

step "packed, pending: KPACK_HOOK=yes, the kernel package's postinst hooks, then update-grub"
configure KPACK_HOOK yes
"$hook" install "$version" 2>&1 | tee "$work/install.log"
grep -q "^kpack-kernel-hook: $version: the next boot tries the packed kernel once" "$work/install.log" \
    || fail "the hook did not say it armed a trial"
"$work/update-grub"
grep -q '^   set default="${saved_entry}"$' "$grubcfg" || fail "kpack.cfg did not make GRUB_DEFAULT saved"
[[ $(env_value next_entry) == "kpack-trial>kpack-trial-$version" ]] || fail "next_entry is '$(env_value next_entry)'"
[[ $(env_value saved_entry) == "kpack-stock>kpack-stock-$version" ]] || fail "saved_entry is '$(env_value saved_entry)'"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" packed panic=5 kpack.trial console=ttyS0
expect_linux "the trial entry, when GRUB cannot load the packed image" "$(refused_boot trial "$version")" \
    "$(stock_v "$version")" stock console=ttyS0 kpack.refused
expect_linux "the boot after" "$(boot_after)" "$(stock_v "$version")" stock console=ttyS0
expect_linux "the fallback" "$(fallback_boot)" "$(stock_v "$version")" stock
stock_entry
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: pending; next boot: packed, on trial; default: stock"
expect_status "$old" "$old: stock"

step "failed: the trial boot never reached userspace; the machine came back stock"
play_boot "$version" stock
grep -q "^kpack-kernel-hook: $version: trial boot failed (this boot is $version, stock)" "$work/boot.log" \
    || fail "the boot check did not say the trial failed"
expect_linux "the next boot" "$(next_boot)" "$(stock_v "$version")" stock
expect_linux "the fallback" "$(fallback_boot)" "$(stock_v "$version")" stock
stock_entry
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: failed; default: stock"
# A second boot changes nothing: the trial stays failed.
play_boot "$version" stock
[[ ! -s $work/boot.log ]] || fail "a later stock boot said: $(cat "$work/boot.log")"
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: failed; default: stock"

step "pending again: kpack-kernel-hook trial"
"$hook" trial "$version"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" packed panic=5 kpack.trial
expect_linux "the boot after" "$(boot_after)" "$(stock_v "$version")" stock
stock_entry

step "passed: the trial boot reached userspace through kpack"
play_boot "$version" packed
grep -q "^kpack-kernel-hook: $version: trial boot passed" "$work/boot.log" || fail "the boot check did not pass the trial"
[[ $(env_value saved_entry) == "kpack-packed>kpack-packed-$version" ]] || fail "saved_entry is '$(env_value saved_entry)'"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" packed console=ttyS0
[[ " $(next_boot) " != *" panic=5 "* ]] || fail "the default entry has the trial's panic=5"
expect_linux "the packed entry, when GRUB cannot load the packed image" "$(refused_boot packed "$version")" \
    "$(stock_v "$version")" stock console=ttyS0 kpack.refused
expect_linux "the fallback" "$(fallback_boot)" "$(stock_v "$version")" stock
stock_entry
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: passed; default: packed"

step "refused: GRUB could not load the packed default (shim refused it) and booted stock with kpack.refused"
play_boot "$version" stock "BOOT_IMAGE=$(stock_v "$version") root=/dev/vda1 ro console=ttyS0 kpack.refused"
grep -q "^kpack-kernel-hook: $version: GRUB could not load the packed kernel .*: the stock kernel is the default now" "$work/boot.log" \
    || fail "the boot check did not fail the refused image's trial"
expect_linux "the next boot" "$(next_boot)" "$(stock_v "$version")" stock
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: failed; default: stock"
"$hook" trial "$version" > /dev/null
play_boot "$version" packed
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: passed; default: packed"

step "older, stock: sync keeps the older kernel stock (no trial could catch it); the same image keeps its passed trial"
"$hook" sync 2>&1 | tee "$work/sync.log"
! grep -q "next boot tries" "$work/sync.log" || fail "sync armed a trial for an image that passed one"
cmp -s "$stage/boot/vmlinuz-$old" "$work/stock" || fail "sync packed $old, which no trial has tried"
grep -qx "kpack-kernel-hook: $old: kept stock: not the newest kernel, .*; kpack-kernel-hook trial $old packs it and tries it at the next boot" "$work/sync.log" \
    || fail "sync did not say why $old stays stock"
expect_status "$old" "$old: stock"
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: passed; default: packed"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" packed
stock_entry

step "older, pending then passed: kpack-kernel-hook trial packs the older kernel and tries it once"
"$hook" trial "$old" 2>&1 | tee "$work/trial-old.log"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$old" packed panic=5 kpack.trial
expect_linux "the boot after" "$(boot_after)" "/boot/vmlinuz-$version" packed
expect_status "$old" "$old: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$old); trial: pending; next boot: packed, on trial"
grep -q "menuentry .*'kpack-stock-$old'" "$grubcfg" || fail "the stock submenu lacks $old"
play_boot "$old" packed
grep -q "^kpack-kernel-hook: $old: trial boot passed" "$work/boot.log" || fail "the boot check did not pass $old's trial"
expect_status "$old" "$old: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$old); trial: passed"
"$hook" sync 2> "$work/sync.log"
is_kpack_image "$stage/boot/vmlinuz-$old" || { cat "$work/sync.log" >&2; fail "sync made $old stock again although its image passed a trial"; }
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$version" packed
stock_entry

step "pending: a newer kernel installed is packed and tried; its stock kernel is the default"
add_kernel "$new"
"$hook" install "$new" 2>&1 | tee "$work/install.log"
"$work/update-grub"
grep -q "^kpack-kernel-hook: $new: the next boot tries the packed kernel once" "$work/install.log" || fail "no trial for $new"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$new" packed panic=5 kpack.trial
expect_linux "the boot after" "$(boot_after)" "$(stock_v "$new")" stock
expect_linux "the fallback" "$(fallback_boot)" "$(stock_v "$new")" stock
expect_status "$version" "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); trial: passed"
stock_entry
# The stock submenu lists the newest first (the fallback's pick).
[[ $(entries | awk -F'\t' '$2 ~ /^kpack-stock>/ { print $2; exit }') == "kpack-stock>kpack-stock-$new" ]] \
    || fail "the stock submenu does not start with $new"

step "restored: KPACK_HOOK=no and sync"
configure KPACK_HOOK no
"$hook" sync
for v in "$old" "$version" "$new"; do
    cmp -s "$stage/boot/vmlinuz-$v" "$work/stock" || fail "$v is not stock again"
    expect_status "$v" "$v: stock$([[ $v == "$new" ]] && echo "; default: stock")"
done
[[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains"
none_of_kpack
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$new" stock
grep -q '^   set default="0"$' "$grubcfg" || fail "GRUB_DEFAULT is not 0 with the hook off"

step "purged: on again, then kpack removed (prerm: restore; the files gone; postrm: update-grub)"
configure KPACK_HOOK yes
"$hook" sync > /dev/null 2>&1
[[ $(env_value next_entry) == "kpack-trial>kpack-trial-$new" ]] || fail "sync did not arm a trial for $new"
"$hook" restore
rm "$hook"
"$work/update-grub"
for v in "$old" "$version" "$new"; do cmp -s "$stage/boot/vmlinuz-$v" "$work/stock" || fail "$v is not stock after the removal"; done
none_of_kpack
grep -q '^   set default="0"$' "$grubcfg" || fail "GRUB_DEFAULT is not back to 0 after the removal"
expect_linux "the next boot" "$(next_boot)" "/boot/vmlinuz-$new" stock
stock_entry

echo "trial.sh ($case): PASS"
rm -rf "$stage"
