#!/usr/bin/env bash
# hook.sh BUILD_DIR CASE — the kernel hook in a staging root, never the machine's own /boot or /etc.
#
# The root holds kpack as installed (cmake --install, default and kernel-hooks components, or with
# KPACK_TEST_DEB=FILE.deb that package unpacked) and a real Debian kernel package unpacked
# (dpkg-deb -x). The hooks are run by the very lines the kernel's postinst and postrm use, taken
# from the package's own maintainer scripts with /etc/kernel pointed into the root.
#
#   enabled         KPACK_HOOK=yes: /boot/vmlinuz-VERSION becomes a kpack image, which the default
#                   entry of the GRUB menu update-grub makes boots to /init; a reinstall of the
#                   kernel package is packed again; disabling and `sync` restore the stock file
#                   byte for byte; (with the .deb) kpack's prerm restores it and its postinst packs
#                   it again; the kernel's removal (postrm hooks) leaves no stock copy behind
#   disabled        the default configuration, then KPACK_KERNELS matching other kernels only: the
#                   stock kernel stays, untouched, and boots (GRUB)
#   failure         kpack dies part-way (file-size limit): the hook exits non-zero with one line,
#                   and the stock kernel is in place with no leftovers
#   secure-boot     firmware says Secure Boot is on: one line, status 0, the stock kernel stays (and
#                   a kernel packed earlier is put back)
#   sync            two installed kernels: `kpack-kernel-hook sync` packs both, GRUB's menu lists the
#                   same two with the newest as default, and disabling restores both
#   kernel-install  systemd's kernel-install (layout bls) with 90-loaderentry and 91-kpack: the
#                   entry's kernel is a kpack image, which boots to /init; disabled, the next
#                   `kernel-install add` puts the stock kernel back
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR CASE" >&2; exit 2; }
build=$(realpath "$1") case=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../boot/fixture.sh"
boot_fixture "$build/boot"

fail() { echo "hook.sh ($case): FAIL: $*" >&2; exit 1; }

work=$build/install/hook-$case${KPACK_TEST_DEB:+-deb}
rm -rf "$work"
mkdir -p "$work"
stage=$work/root
log=$work/hook.log

# ---- the staging root ---------------------------------------------------------------------------

if [[ -n ${KPACK_TEST_DEB:-} ]]; then
    dpkg-deb -x "$KPACK_TEST_DEB" "$stage"
else
    DESTDIR=$stage cmake --install "$build" --prefix /usr >/dev/null
    DESTDIR=$stage cmake --install "$build" --prefix /usr --component kernel-hooks >/dev/null
fi
# The kernel's .deb is the one the boot fixture unpacked: CACHE/NAME/boot/vmlinuz-* -> CACHE/NAME.deb
kernel_deb=$(dirname "$(dirname "$vmlinuz")").deb
[[ -s $kernel_deb ]] || fail "$kernel_deb: the kernel package is missing"
dpkg-deb -x "$kernel_deb" "$stage"
dpkg-deb -e "$kernel_deb" "$work/control"
version=$(sed -n 's/^version=//p' "$work/control/postinst")
[[ -n $version ]] || fail "$work/control/postinst: no version= line"
image=$stage/boot/vmlinuz-$version
cp "$image" "$work/stock"

# What the hooks see: this root, its kpack, and no Secure Boot unless a case fakes one (the host's
# own firmware must not decide the outcome).
export KPACK_ROOT=$stage KPACK_BIN=$stage/usr/bin/kpack KPACK_HOOK_PROGRAM=$stage/usr/sbin/kpack-kernel-hook
export KPACK_EFIVARS=$work/efivars
"$KPACK_BIN" --version

configure() { sed -i "s/^$1=.*/$1=$2/" "$stage/etc/default/kpack"; }

# Run the hook lines of the kernel's maintainer script SCRIPT (postinst or postrm) with ARGS, as
# dpkg would, but with /etc/kernel inside the root. Output goes to $log; the status is returned.
run_maintainer_hooks() {
    local script=$1; shift
    local body
    body=$(sed -n '/^version=/p; /^image_path=/p; /^if \[ -d \/etc\/kernel\/[a-z]*\.d \]/,/^fi/p' \
           "$work/control/$script")
    grep -q run-parts <<< "$body" || fail "$script: no run-parts line found"
    body=${body//"/etc/kernel"/"$stage/etc/kernel"}
    sh -e -c "$body" "$script" "$@" > "$log" 2>&1
}

is_kpack_image() { "$KPACK_BIN" info "$1" | head -n1 | grep -q ': kpack image, '; }
same_as_stock() { cmp -s "$image" "$work/stock"; }
no_leftovers() {
    local extra
    extra=$(find "$stage/boot" -name '.*' -print -quit)
    [[ -z $extra ]] || fail "leftover in /boot: $extra"
}
boot() { "$here/../boot/boot.sh" --log "$work/serial.log" "$1" "$initrd"; }

# Boot the root's kernel the way its boot menu would: the menu made by Debian's own
# /etc/grub.d/10_linux (update-grub's kernel lister) with only its kernel glob pointed into the root,
# then its default entry run by GRUB (i386-pc `linux`, from a grub-mkrescue ISO holding the root's
# /boot). So update-grub must still find exactly this one kernel under its stock name, with its initrd.
# make_menu KERNELS: run 10_linux on the root, check it found KERNELS kernels, and set $entry to
# the default (first) menu entry with the root's paths made /boot/.
make_menu() {
    local generator=$work/10_linux menu=$work/10_linux.cfg rel found
    sed "s#for i in /boot/vmlinuz-\* /vmlinuz-\* /boot/kernel-\* ; do#for i in $stage/boot/vmlinuz-* ; do#" \
        /etc/grub.d/10_linux > "$generator"
    grep -q "in $stage/boot/vmlinuz-" "$generator" || fail "/etc/grub.d/10_linux: its kernel glob changed, cannot point it into the root"
    # Where initramfs-tools would have put the initrd: the test's /init.
    cp "$initrd" "$stage/boot/initrd.img-$version"
    # grub-probe complains about the host's (made-up) root disk; 10_linux carries on, as it does in chroots.
    GRUB_DEVICE=/dev/vda GRUB_DEVICE_BOOT=/dev/vda GRUB_FS=ext4 GRUB_DISTRIBUTOR=Debian \
    GRUB_CMDLINE_LINUX="console=ttyS0 panic=-1" GRUB_DISABLE_RECOVERY=true pkgdatadir=/usr/share/grub \
        sh "$generator" > "$menu" 2> "$work/10_linux.log"
    found=$(grep -c '^Found linux image' "$work/10_linux.log" || true)
    [[ $found -eq $1 ]] || fail "update-grub's 10_linux found $found kernels in the root instead of $1 (see $work/10_linux.log)"
    # The first menuentry is the default one; its paths are relative to the root's file system.
    rel=$(grub-mkrelpath "$stage/boot")
    entry=$(awk '/^menuentry /{on=1} on{print} on && /^}/{exit}' "$menu" | sed "s#$rel/#/boot/#g")
}

boot_with_grub() {
    local tree=$work/iso-tree iso=$work/grub.iso entry
    make_menu 1
    grep -Eq "^\s*linux\s+/boot/vmlinuz-$version " <<< "$entry" || fail "the default menu entry does not boot /boot/vmlinuz-$version"
    grep -Eq "^\s*initrd\s+/boot/initrd.img-$version\$" <<< "$entry" || fail "the default menu entry lacks initrd.img-$version"
    mkdir -p "$tree/boot/grub"
    ln -f "$image" "$tree/boot/vmlinuz-$version" 2>/dev/null || cp "$image" "$tree/boot/vmlinuz-$version"
    ln -f "$initrd" "$tree/boot/initrd.img-$version" 2>/dev/null || cp "$initrd" "$tree/boot/initrd.img-$version"
    # 00_header would define load_video and the serial terminal; this is all of it the entry needs.
    printf '%s\n' "serial --unit=0 --speed=115200" "terminal_input serial" "terminal_output serial" \
        "set timeout=0" "set default=0" "function load_video { true; }" "$entry" > "$tree/boot/grub/grub.cfg"
    grub-mkrescue -o "$iso" "$tree" > "$work/mkrescue.log" 2>&1 || { cat "$work/mkrescue.log" >&2; fail "grub-mkrescue failed"; }
    rm -rf "$tree"
    "$here/../boot/boot.sh" --no-kernel --log "$work/serial.log" "$image" "$initrd" -cdrom "$iso"
    rm -f "$iso"
}

# ---- the cases ----------------------------------------------------------------------------------

case $case in
    enabled)
        configure KPACK_HOOK yes
        run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed"; }
        cat "$log"
        is_kpack_image "$image" || fail "$image is not a kpack image after the hook"
        cmp -s "$stage/boot/kpack/stock/vmlinuz-$version" "$work/stock" || fail "the stock copy differs from the package's kernel"
        boot_with_grub
        # The kernel package reinstalled (dpkg puts its stock file back, then runs the postinst): the
        # hook takes that file as the new stock kernel and packs it again.
        cp "$work/stock" "$image"
        run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed on a reinstall"; }
        is_kpack_image "$image" || fail "a reinstalled kernel was not packed again"
        cmp -s "$stage/boot/kpack/stock/vmlinuz-$version" "$work/stock" || fail "the stock copy differs after a reinstall"
        # Disabling and sync: the stock kernel is back, byte for byte.
        configure KPACK_HOOK no
        "$KPACK_HOOK_PROGRAM" sync
        same_as_stock || fail "disabling did not restore the stock kernel"
        [[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains after restoring every kernel"
        # Packed again, then the kernel package removed: dpkg deletes the image, postrm drops the copy.
        configure KPACK_HOOK yes
        "$KPACK_HOOK_PROGRAM" sync
        is_kpack_image "$image" || fail "sync did not pack $image"
        if [[ -n ${KPACK_TEST_DEB:-} ]]; then
            # kpack's own maintainer scripts: removing the package restores every stock kernel, and
            # configuring it applies /etc/default/kpack again.
            dpkg-deb -e "$KPACK_TEST_DEB" "$work/kpack-control"
            PATH=$stage/usr/sbin:$PATH sh -e "$work/kpack-control/prerm" remove
            same_as_stock || fail "removing kpack (its prerm) did not restore the stock kernel"
            PATH=$stage/usr/sbin:$PATH sh -e "$work/kpack-control/postinst" configure
            is_kpack_image "$image" || fail "kpack's postinst did not pack the kernel again"
        fi
        rm "$image"
        run_maintainer_hooks postrm remove || { cat "$log" >&2; fail "the postrm hooks failed"; }
        [[ ! -e $stage/boot/kpack ]] || fail "the stock copy survived the kernel's removal"
        no_leftovers
        ;;
    disabled)
        run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed"; }
        same_as_stock || fail "the hook changed $image although it is disabled"
        [[ ! -e $stage/boot/kpack ]] || fail "the disabled hook created /boot/kpack"
        # Enabled, but for other kernels only (KPACK_KERNELS): this one stays stock too.
        configure KPACK_HOOK yes
        configure KPACK_KERNELS "'*-rt-amd64 5.*'"
        run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed"; }
        same_as_stock || fail "the hook packed $version although KPACK_KERNELS does not match it"
        boot_with_grub
        ;;
    failure)
        configure KPACK_HOOK yes
        # kpack under a file-size limit below the image's size: killed by SIGXFSZ mid-write, the way a
        # full /boot would stop it, after the hook has saved the stock copy.
        real=$KPACK_BIN
        cat > "$work/kpack-limited" <<EOF
#!/bin/sh
[ "\$1" = info ] || ulimit -f 8192
exec "$real" "\$@"
EOF
        chmod +x "$work/kpack-limited"
        status=0
        KPACK_BIN=$work/kpack-limited run_maintainer_hooks postinst configure || status=$?
        cat "$log"
        [[ $status -ne 0 ]] || fail "the postinst hooks succeeded although packing failed"
        lines=$(grep -c '^kpack-kernel-hook:' "$log" || true)
        [[ $lines -eq 1 ]] || fail "expected one kpack-kernel-hook line, got $lines"
        grep -q "^kpack-kernel-hook: $version: packing failed, .* is still the kernel it was: kpack was killed by signal" "$log" \
            || fail "the hook's line does not say what failed"
        same_as_stock || fail "a failed pack changed $image"
        [[ ! -e $stage/boot/kpack ]] || fail "a failed pack left /boot/kpack behind"
        no_leftovers
        ;;
    secure-boot)
        configure KPACK_HOOK yes
        mkdir -p "$KPACK_EFIVARS"
        # efivarfs: 4 bytes of attributes, then the value (1 = Secure Boot on).
        printf '\x06\x00\x00\x00\x01' > "$KPACK_EFIVARS/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
        run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed under Secure Boot"; }
        cat "$log"
        grep -q "^kpack-kernel-hook: $version: Secure Boot is on and a kpack image cannot be signed" "$log" \
            || fail "the hook did not say why it kept the stock kernel"
        same_as_stock || fail "the hook replaced a kernel under Secure Boot"
        # A kernel packed while Secure Boot was off gets its signed stock kernel back.
        KPACK_EFIVARS=$work/no-efivars "$KPACK_HOOK_PROGRAM" install "$version"
        is_kpack_image "$image" || fail "could not pack with Secure Boot off"
        "$KPACK_HOOK_PROGRAM" sync
        same_as_stock || fail "turning Secure Boot on did not bring the stock kernel back"
        ;;
    kernel-install)
        configure KPACK_HOOK yes
        conf=$stage/etc/kernel
        echo layout=bls > "$conf/install.conf"
        echo "console=ttyS0 panic=-1" > "$conf/cmdline"
        machine_id=0123456789abcdef0123456789abcdef
        mkdir -p "$stage/efi/loader/entries"
        # Only the plugins that write into the boot root: no depmod, no initrd generator.
        kernel_install() {
            BOOT_ROOT=$stage/efi KERNEL_INSTALL_CONF_ROOT=$conf MACHINE_ID=$machine_id \
            KERNEL_INSTALL_PLUGINS="/usr/lib/kernel/install.d/90-loaderentry.install $stage/usr/lib/kernel/install.d/91-kpack.install" \
                kernel-install "$@" > "$log" 2>&1 || { cat "$log" >&2; fail "kernel-install $* failed"; }
        }
        kernel_install add "$version" "$image"
        cat "$log"
        entry=$stage/efi/$machine_id/$version/linux
        is_kpack_image "$entry" || fail "$entry is not a kpack image"
        same_as_stock || fail "kernel-install's plugin changed the package's own kernel"
        # The path is relative to the boot root's mount point (here the host's /, so it is long).
        grep -Eq "^linux +.*/$machine_id/$version/linux\$" "$stage/efi/loader/entries/$machine_id-$version.conf" \
            || fail "the loader entry does not point at the packed kernel"
        boot "$entry"
        # Disabled, `kernel-install add` again: the entry gets the stock kernel back.
        configure KPACK_HOOK no
        kernel_install add "$version" "$image"
        cmp -s "$entry" "$work/stock" || fail "with the hook disabled, kernel-install did not put the stock kernel back"
        ;;
    sync)
        # Two installed kernels (the second one the same kernel under an older version's name, as a
        # previous kernel package would have left it): enabling and sync pack both; GRUB's menu
        # still lists exactly two, the newest first; disabling and sync restore both.
        old_version=${version/-57-/-56-}
        [[ $old_version != "$version" ]] || old_version=0.0.0-test
        cp -p "$image" "$stage/boot/vmlinuz-$old_version"
        cp -p "$stage/boot/config-$version" "$stage/boot/config-$old_version"
        configure KPACK_HOOK yes
        "$KPACK_HOOK_PROGRAM" sync
        "$KPACK_HOOK_PROGRAM" status | tee "$work/status.txt"
        for v in "$version" "$old_version"; do
            is_kpack_image "$stage/boot/vmlinuz-$v" || fail "sync did not pack $v"
            grep -qx "$v: kpack image (stock in .*)" "$work/status.txt" || fail "status does not call $v packed"
        done
        make_menu 2
        grep -Eq "^\s*linux\s+/boot/vmlinuz-$version " <<< "$entry" || fail "the default menu entry is not the newest kernel"
        configure KPACK_HOOK no
        "$KPACK_HOOK_PROGRAM" sync
        same_as_stock || fail "disabling did not restore $version"
        cmp -s "$stage/boot/vmlinuz-$old_version" "$work/stock" || fail "disabling did not restore $old_version"
        [[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains after restoring every kernel"
        no_leftovers
        ;;
    *)
        echo "hook.sh: unknown case '$case'" >&2; exit 2 ;;
esac

echo "hook.sh ($case): PASS"
rm -rf "$stage"  # ~120 MB of modules; the logs stay in $work
