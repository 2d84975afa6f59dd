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
#   secure-boot     firmware says Secure Boot is on, KPACK_SIGN_KEY/CERT name OVMF's snakeoil key:
#                   the installed kernel is a kpack image sbverify accepts, the stock copy is kept,
#                   and it boots to /init under OVMF's Secure Boot through a signed systemd-boot
#                   (tests/efi/efi-boot.sh's secureboot cell); KPACK_SECURE_BOOT=no packs unsigned
#   secure-boot.dkms   Secure Boot, no KPACK_SIGN_*, a DKMS machine owner key (DER certificate, as
#                   DKMS makes it): the kernel, and the kernel-install plugin's copy, are signed
#                   with it; a sync with nothing changed leaves the signed image as it is
#   secure-boot.no-key Secure Boot without any key: one line naming the settings, status 0, the stock
#                   kernel stays (and a kernel packed earlier is put back)
#   secure-boot.untrusted  a key that chains to no certificate in the (faked) db or MokListRT: the
#                   stock kernel stays, the line says how to enrol it; also an enrolment pending in
#                   MokNew, and no lists at all (cannot tell: refused); a key issued by an enrolled
#                   CA signs; KPACK_SIGN_UNTRUSTED=yes signs with the untrusted key, saying so;
#                   `status` names the signer and whether the machine trusts it
#   secure-boot.key-mode  a key that group (0640) or others (0604) can read: refused, its mode named,
#                   the stock kernel kept; at 0600 it signs
#   secure-boot.wrong-cert  a certificate that is not the key's (sbsign refuses), then an sbverify
#                   that rejects the signed image: the stock kernel stays, or comes back
#   sync            two installed kernels: `kpack-kernel-hook sync` packs both, GRUB's menu lists the
#                   same two with the newest as default, and disabling restores both
#   kernel-install  systemd's kernel-install (layout bls) with 90-loaderentry and 91-kpack: the
#                   entry's kernel is a kpack image, which boots to /init; disabled, the next
#                   `kernel-install add` puts the stock kernel back. With KPACK_KERNEL_TAG naming a
#                   kernel of 6.19's packaging (bpo), its source is /usr/lib/modules/VERSION/vmlinuz,
#                   as systemd's tools lay kernels out
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR CASE" >&2; exit 2; }
build=$(realpath "$1") case=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../boot/fixture.sh"
boot_fixture "$build/boot" "$(kernel_tag)"

fail() { echo "hook.sh ($case): FAIL: $*" >&2; exit 1; }

work=$build/install/hook-$case${KPACK_TEST_DEB:+-deb}
[[ $(kernel_tag) == 6.1 ]] || work+=-$(kernel_tag)
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
# The kernel's .deb is the one the boot fixture unpacked: CACHE/NAME/boot/vmlinuz-* -> CACHE/NAME.deb,
# or since 6.19 linux-binary-VERSION's CACHE/NAME/usr/lib/modules/VERSION/vmlinuz, which has no
# maintainer scripts of its own (the linux-image meta package's call linux-run-hooks, which only a
# Debian 13 system runs: tests/debian): only the kernel-install case takes it, as its source.
if [[ $vmlinuz == */usr/lib/modules/*/vmlinuz ]]; then
    [[ $case == kernel-install ]] || fail "$vmlinuz: a kernel of 6.19's packaging serves the kernel-install case only"
    kernel_deb=${vmlinuz%/usr/lib/modules/*}.deb
    version=$(basename "$(dirname "$vmlinuz")")
    image=$stage/usr/lib/modules/$version/vmlinuz
else
    kernel_deb=$(dirname "$(dirname "$vmlinuz")").deb
    version=
    image=
fi
[[ -s $kernel_deb ]] || fail "$kernel_deb: the kernel package is missing"
dpkg-deb -x "$kernel_deb" "$stage"
if [[ -z $image ]]; then
    dpkg-deb -e "$kernel_deb" "$work/control"
    version=$(sed -n 's/^version=//p' "$work/control/postinst")
    [[ -n $version ]] || fail "$work/control/postinst: no version= line"
    image=$stage/boot/vmlinuz-$version
fi
cp "$image" "$work/stock"
# The version in a regular expression: Debian's versions since 6.12 hold a + (7.3.4+deb13-...).
version_re=$(printf '%s' "$version" | sed 's/[.+]/\\&/g')

# What the hooks see: this root, its kpack, and a machine without UEFI (sysfs's firmware directory
# without efi/) unless a case fakes one (the host's own firmware must not decide the outcome).
export KPACK_ROOT=$stage KPACK_BIN=$stage/usr/bin/kpack KPACK_HOOK_PROGRAM=$stage/usr/sbin/kpack-kernel-hook
export KPACK_EFIVARS=$work/firmware/efi/efivars
mkdir -p "$work/firmware" "$work/bios/firmware"
bios_efivars=$work/bios/firmware/efi/efivars
"$KPACK_BIN" --version

configure() { sed -i "s|^$1=.*|$1=$2|" "$stage/etc/default/kpack"; }

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

is_kpack_image() { local info; info=$("$KPACK_BIN" info "$1") && [[ ${info%%$'\n'*} == *': kpack image, '* ]]; }
same_as_stock() { cmp -s "$image" "$work/stock"; }
no_leftovers() {
    local extra
    extra=$(find "$stage/boot" -name '.*' -print -quit)
    [[ -z $extra ]] || fail "leftover in /boot: $extra"
}
boot() { "$here/../boot/boot.sh" --log "$work/serial.log" "$1" "$initrd"; }

# Secure Boot as efivarfs shows it: 4 bytes of attributes, then the value (1 = on).
secure_boot_on() {
    mkdir -p "$KPACK_EFIVARS"
    printf '\x06\x00\x00\x00\x01' > "$KPACK_EFIVARS/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
}
# The 4 bytes of a little-endian 32-bit N.
le32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24)))"; }
# enrol VARIABLE CERT: append CERT (PEM or DER) to VARIABLE (db or MokListRT, or MokNew for an
# enrolment mokutil has only requested) as efivarfs shows it: attributes, then one EFI_SIGNATURE_LIST
# of one X.509 signature (type GUID, list size, header size 0, signature size, owner GUID, the DER).
enrol() {
    local guid=605dab50-e046-4300-abb6-3dd810dd8b23 der=$work/enrol.der n
    [[ $1 == db ]] && guid=d719b2cb-3d3a-4596-a3bc-dad00e67656f
    local var=$KPACK_EFIVARS/$1-$guid
    openssl x509 -in "$2" -outform DER -out "$der" 2> /dev/null \
        || openssl x509 -inform DER -in "$2" -outform DER -out "$der" || fail "enrol: $2 is no certificate"
    n=$(stat -c %s "$der")
    mkdir -p "$KPACK_EFIVARS"
    [[ -e $var ]] || printf '\x07\x00\x00\x00' > "$var"
    { printf '\xa1\x59\xc0\xa5\xe4\x94\xa7\x4a\x87\xb5\xab\x15\x5c\x2b\xf0\x72'
      le32 $((28 + 16 + n)); le32 0; le32 $((16 + n)); printf 'kpack test owner'; cat "$der"; } >> "$var"
}
# install_under_secure_boot [KEY CERT]: the hook on, signing with KEY and CERT (paths on the target)
# when given, Secure Boot on, then the kernel package's postinst hooks; their log shown.
install_under_secure_boot() {
    configure KPACK_HOOK yes
    if [[ $# -eq 2 ]]; then
        configure KPACK_SIGN_KEY "$1"
        configure KPACK_SIGN_CERT "$2"
    fi
    secure_boot_on
    run_maintainer_hooks postinst configure || { cat "$log" >&2; fail "the postinst hooks failed under Secure Boot"; }
    cat "$log"
}
need() { for t in "$@"; do command -v "$t" > /dev/null || { echo "hook.sh ($case): SKIP: $t not installed" >&2; exit 77; }; done; }
# new_key PREFIX FORMAT: PREFIX.key and PREFIX.crt (FORMAT PEM or DER), a fresh pair as DKMS makes its own.
new_key() {
    mkdir -p "$(dirname "$1")"
    openssl req -new -x509 -nodes -days 36500 -subj "/CN=kpack hook test" -newkey rsa:2048 \
        -keyout "$1.key" -outform "$2" -out "$1.crt" 2> /dev/null || fail "openssl could not make a key pair"
    chmod 600 "$1.key"  # the owner's alone, or the hook signs nothing with it
}
# signed_with FILE CERT: sbverify accepts FILE's signature by PEM certificate CERT.
signed_with() { sbverify --cert "$2" "$1" > /dev/null 2>&1; }
unsigned() { ! grep -q '^signature' <<< "$(sbverify --list "$1" 2> /dev/null)"; }
# The line the hook prints when Secure Boot is on and it cannot sign: why (REASON), and what to set.
unsigned_line() {
    echo "kpack-kernel-hook: $version: Secure Boot is on and the image cannot be signed ($1): keeping the stock kernel; set KPACK_SIGN_KEY and KPACK_SIGN_CERT in $stage/etc/default/kpack (default: DKMS's /var/lib/dkms/mok.key and /var/lib/dkms/mok.pub)"
}

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
    grep -Eq "^\s*linux\s+/boot/vmlinuz-$version_re " <<< "$entry" || fail "the default menu entry does not boot /boot/vmlinuz-$version"
    grep -Eq "^\s*initrd\s+/boot/initrd.img-$version_re\$" <<< "$entry" || fail "the default menu entry lacks initrd.img-$version"
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
        need sbsign sbverify openssl
        [[ -r /usr/share/ovmf/PkKek-1-snakeoil.key ]] || { echo "hook.sh ($case): SKIP: OVMF's snakeoil key not installed" >&2; exit 77; }
        # OVMF's snakeoil key, which its Secure Boot variables enroll in db: the key a real machine's
        # owner would enroll with mokutil.
        mkdir -p "$stage/etc/kpack-keys"
        openssl rsa -in /usr/share/ovmf/PkKek-1-snakeoil.key -passin pass:snakeoil \
            -out "$stage/etc/kpack-keys/db.key" 2> /dev/null || fail "cannot decrypt OVMF's snakeoil key"
        chmod 600 "$stage/etc/kpack-keys/db.key"
        cert=$stage/etc/kpack-keys/db.crt
        cp /usr/share/ovmf/PkKek-1-snakeoil.pem "$cert"
        enrol db "$cert"
        install_under_secure_boot /etc/kpack-keys/db.key /etc/kpack-keys/db.crt
        grep -q "^kpack-kernel-hook: $version: packed $image (lz4, [0-9]* bytes, signed with $cert; stock kernel in " "$log" \
            || fail "the hook did not say it packed and signed the kernel"
        is_kpack_image "$image" || fail "$image is not a kpack image under Secure Boot with a key"
        signed_with "$image" "$cert" || fail "sbverify --cert $cert does not accept $image"
        cmp -s "$stage/boot/kpack/stock/vmlinuz-$version" "$work/stock" || fail "the stock copy differs from the package's kernel"
        no_leftovers
        # The signed image through the Secure Boot chain: the firmware checks systemd-boot, which has
        # the firmware check the kernel; the kernel must report Secure Boot on.
        "$here/../efi/efi-boot.sh" "$KPACK_BIN" secureboot "signed=$image" "$build"
        # For a target without Secure Boot the same key is left unused.
        configure KPACK_SECURE_BOOT no
        "$KPACK_HOOK_PROGRAM" sync
        is_kpack_image "$image" || fail "KPACK_SECURE_BOOT=no did not pack $image"
        unsigned "$image" || fail "KPACK_SECURE_BOOT=no signed $image"
        ;;
    secure-boot.dkms)
        need sbsign sbverify openssl
        # DKMS's machine owner key: a PEM private key and a DER certificate (what mokutil imports).
        new_key "$work/mok" DER
        mkdir -p "$stage/var/lib/dkms"
        cp -p "$work/mok.key" "$stage/var/lib/dkms/mok.key"
        cp "$work/mok.crt" "$stage/var/lib/dkms/mok.pub"
        openssl x509 -inform DER -in "$work/mok.crt" -out "$work/mok.pem"
        enrol MokListRT "$work/mok.crt"
        install_under_secure_boot
        is_kpack_image "$image" || fail "$image is not a kpack image with DKMS's key present"
        signed_with "$image" "$work/mok.pem" || fail "$image is not signed with DKMS's key"
        # A sync with nothing changed keeps the signed image as it is: a signature is not
        # reproducible, and a new one would be a new image whose trial has not passed.
        signed_hash=$(sha256sum < "$image")
        "$KPACK_HOOK_PROGRAM" sync
        [[ $(sha256sum < "$image") == "$signed_hash" ]] || fail "sync signed an unchanged image again"
        cmp -s "$stage/boot/kpack/stock/vmlinuz-$version" "$work/stock" || fail "the stock copy differs from the package's kernel"
        # The kernel-install plugin's command signs its copy of a stock kernel the same way.
        cp "$work/stock" "$work/entry-linux"
        "$KPACK_HOOK_PROGRAM" entry "$version" "$work/entry-linux" "$work/stock"
        is_kpack_image "$work/entry-linux" || fail "the entry command did not pack its copy"
        signed_with "$work/entry-linux" "$work/mok.pem" || fail "the entry command did not sign its copy with DKMS's key"
        no_leftovers
        ;;
    secure-boot.no-key)
        install_under_secure_boot
        [[ $(grep -c '^kpack-kernel-hook:' "$log") -eq 1 ]] || fail "expected one kpack-kernel-hook line"
        grep -qxF "$(unsigned_line "no key configured, no DKMS key")" "$log" \
            || fail "the hook did not say why it kept the stock kernel and which settings sign it"
        same_as_stock || fail "the hook replaced a kernel under Secure Boot without a key"
        [[ ! -e $stage/boot/kpack ]] || fail "the hook left /boot/kpack without packing"
        # Half a key pair is no key either.
        configure KPACK_SIGN_KEY /etc/kpack-keys/db.key
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        grep -qxF "$(unsigned_line "KPACK_SIGN_KEY without KPACK_SIGN_CERT")" "$log" || { cat "$log" >&2; fail "half a key pair: wrong line"; }
        same_as_stock || fail "the hook replaced a kernel with half a key pair"
        # A kernel packed while Secure Boot was off gets its signed stock kernel back.
        configure KPACK_SIGN_KEY ''
        KPACK_EFIVARS=$bios_efivars "$KPACK_HOOK_PROGRAM" install "$version"
        is_kpack_image "$image" || fail "could not pack with Secure Boot off"
        "$KPACK_HOOK_PROGRAM" sync
        same_as_stock || fail "turning Secure Boot on did not bring the stock kernel back"
        [[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains after restoring the kernel"
        ;;
    secure-boot.cannot-tell)
        # Where the firmware cannot be asked, Secure Boot counts as on: without a key the signed
        # stock kernel stays, with one line saying why. Off only where it is known to be.
        configure KPACK_HOOK yes
        cannot_tell="kpack-kernel-hook: cannot tell whether Secure Boot is on"
        mkdir -p "$work/uefi/firmware/efi" "$work/empty/firmware/efi/efivars"
        for efivars in "$work/uefi/firmware/efi/efivars" "$work/nosys/firmware/efi/efivars" \
                       "$work/empty/firmware/efi/efivars"; do
            # A UEFI machine without efivarfs mounted; no sysfs at all (a chroot); an empty efivarfs.
            KPACK_EFIVARS=$efivars "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log" || { cat "$log" >&2; fail "install failed"; }
            grep -q "^$cannot_tell (${efivars//./\\.}/SecureBoot-" "$log" || { cat "$log" >&2; fail "$efivars: no line saying Secure Boot cannot be told"; }
            grep -qxF "$(unsigned_line "no key configured, no DKMS key")" "$log" || { cat "$log" >&2; fail "$efivars: not kept as under Secure Boot"; }
            same_as_stock || fail "$efivars: an unsigned image replaced the kernel although Secure Boot could be on"
        done
        # A mounted efivarfs without a SecureBoot variable: firmware without Secure Boot, packed.
        mkdir -p "$work/nosb/firmware/efi/efivars"
        printf '\x06\x00\x00\x00\x01\x00' > "$work/nosb/firmware/efi/efivars/BootCurrent-8be4df61-93ca-11d2-aa0d-00e098032b8c"
        KPACK_EFIVARS=$work/nosb/firmware/efi/efivars "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        ! grep -q "$cannot_tell" "$log" || fail "a mounted efivarfs without SecureBoot was taken as unknown"
        is_kpack_image "$image" || fail "firmware without Secure Boot: not packed"
        "$KPACK_HOOK_PROGRAM" remove "$version" >/dev/null 2>&1 || true
        cp "$work/stock" "$image"
        # A machine without UEFI (the default of these tests): packed.
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        ! grep -q "$cannot_tell" "$log" || fail "a BIOS machine was taken as unknown"
        is_kpack_image "$image" || fail "a machine without UEFI: not packed"
        ;;
    secure-boot.untrusted)
        need sbsign sbverify openssl
        # A key pair this machine's db and MokListRT do not trust: shim would refuse what it signs, so
        # the stock kernel stays, with one line saying why and how to enrol it.
        new_key "$stage/etc/kpack-keys/mine" PEM
        new_key "$work/someone-else" PEM
        enrol db "$work/someone-else.crt"
        install_under_secure_boot /etc/kpack-keys/mine.key /etc/kpack-keys/mine.crt
        mine=$stage/etc/kpack-keys/mine.crt
        remedy="enrol it (mokutil --import with the certificate in DER, reboot, confirm in MokManager, then kpack-kernel-hook sync), or set KPACK_SIGN_UNTRUSTED=yes in $stage/etc/default/kpack to sign anyway"
        untrusted_line() {
            echo "kpack-kernel-hook: $version: Secure Boot is on and the image cannot be signed ($1): keeping the stock kernel; $remedy"
        }
        grep -qxF "$(untrusted_line "this machine does not trust $mine: it chains to no certificate in db or MokListRT")" "$log" \
            || fail "the hook did not refuse a key the machine does not trust, saying how to enrol it"
        same_as_stock || fail "the hook signed with an untrusted key"
        [[ ! -e $stage/boot/kpack ]] || fail "an untrusted key left /boot/kpack behind"
        # Requested with mokutil --import but not yet confirmed in MokManager: said so.
        enrol MokNew "$mine"
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        grep -qxF "$(untrusted_line "this machine does not trust $mine yet: a key enrolment is pending (mokutil --import), to be confirmed in MokManager at the next boot")" "$log" \
            || { cat "$log" >&2; fail "a pending enrolment was not named"; }
        same_as_stock || fail "the hook signed with a key whose enrolment is pending"
        rm "$KPACK_EFIVARS"/MokNew-*
        # No list to ask (db and MokListRT absent): trust cannot be told, and counts as none.
        mv "$KPACK_EFIVARS"/db-* "$work/db.saved"
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        grep -qxF "$(untrusted_line "cannot tell whether this machine trusts $mine: $KPACK_EFIVARS lists no certificate in db or MokListRT")" "$log" \
            || { cat "$log" >&2; fail "trust that cannot be told was not refused"; }
        same_as_stock || fail "the hook signed although trust could not be told"
        mv "$work/db.saved" "$KPACK_EFIVARS/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f"
        # A certificate issued by an enrolled CA is trusted through it, as shim trusts it.
        openssl req -new -x509 -nodes -days 36500 -subj "/CN=kpack test CA" -newkey rsa:2048 \
            -keyout "$work/ca.key" -out "$work/ca.crt" 2> /dev/null || fail "cannot make a CA"
        openssl req -new -nodes -subj "/CN=kpack test leaf" -newkey rsa:2048 -keyout "$stage/etc/kpack-keys/leaf.key" \
            -out "$work/leaf.csr" 2> /dev/null || fail "cannot make a request"
        openssl x509 -req -in "$work/leaf.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
            -days 36500 -out "$stage/etc/kpack-keys/leaf.crt" 2> /dev/null || fail "cannot issue the leaf"
        chmod 600 "$stage/etc/kpack-keys/leaf.key"
        enrol MokListRT "$work/ca.crt"
        configure KPACK_SIGN_KEY /etc/kpack-keys/leaf.key
        configure KPACK_SIGN_CERT /etc/kpack-keys/leaf.crt
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log" || { cat "$log" >&2; fail "install failed"; }
        signed_with "$image" "$stage/etc/kpack-keys/leaf.crt" || { cat "$log" >&2; fail "a key issued by an enrolled CA did not sign"; }
        "$KPACK_HOOK_PROGRAM" status | tee "$work/status.txt"
        grep -qF "$version: kpack image (stock in $stage/boot/kpack/stock/vmlinuz-$version); signed by 'CN = kpack test leaf', trusted by this machine" "$work/status.txt" \
            || fail "status does not name the signer and its trust"
        # Forced: the untrusted key signs, the line says so, and status says the machine does not trust it.
        configure KPACK_SIGN_KEY /etc/kpack-keys/mine.key
        configure KPACK_SIGN_CERT /etc/kpack-keys/mine.crt
        configure KPACK_SIGN_UNTRUSTED yes
        "$KPACK_HOOK_PROGRAM" sync 2> "$log" || { cat "$log" >&2; fail "a forced sync failed"; }
        grep -qxF "kpack-kernel-hook: $version: KPACK_SIGN_UNTRUSTED=yes in $stage/etc/default/kpack: signing all the same (this machine does not trust $mine: it chains to no certificate in db or MokListRT); a trial boot tells whether shim accepts it" "$log" \
            || { cat "$log" >&2; fail "a forced signature was not said"; }
        signed_with "$image" "$mine" || fail "KPACK_SIGN_UNTRUSTED=yes did not sign with the untrusted key"
        "$KPACK_HOOK_PROGRAM" status | tee "$work/status.txt"
        grep -qF "; signed by 'CN = kpack hook test', this machine does not trust $stage/boot/kpack/stock/vmlinuz-$version.signer: it chains to no certificate in db or MokListRT" "$work/status.txt" \
            || fail "status does not say the machine does not trust the signer"
        no_leftovers
        ;;
    secure-boot.key-mode)
        need sbsign sbverify openssl
        # A key others can read signs nothing: the stock kernel stays, the line names the key and its
        # mode. Once it is the owner's alone, the same key signs.
        new_key "$stage/etc/kpack-keys/shared" PEM
        chmod 640 "$stage/etc/kpack-keys/shared.key"
        enrol MokListRT "$stage/etc/kpack-keys/shared.crt"
        install_under_secure_boot /etc/kpack-keys/shared.key /etc/kpack-keys/shared.crt
        grep -qxF "$(unsigned_line "$stage/etc/kpack-keys/shared.key is readable by group or others (mode 0640): not signing with it; chmod 600 it")" "$log" \
            || fail "the hook did not refuse a group-readable key, naming its mode"
        same_as_stock || fail "the hook signed with a group-readable key"
        [[ ! -e $stage/boot/kpack ]] || fail "a refused key left /boot/kpack behind"
        chmod 604 "$stage/etc/kpack-keys/shared.key"
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        grep -qF "(mode 0604)" "$log" || { cat "$log" >&2; fail "the hook did not refuse a world-readable key"; }
        same_as_stock || fail "the hook signed with a world-readable key"
        chmod 600 "$stage/etc/kpack-keys/shared.key"
        "$KPACK_HOOK_PROGRAM" install "$version"
        signed_with "$image" "$stage/etc/kpack-keys/shared.crt" || fail "the owner's key did not sign $image"
        no_leftovers
        ;;
    secure-boot.wrong-cert)
        need sbsign sbverify openssl
        new_key "$stage/etc/kpack-keys/one" PEM
        new_key "$stage/etc/kpack-keys/other" PEM
        enrol MokListRT "$stage/etc/kpack-keys/one.crt"
        enrol MokListRT "$stage/etc/kpack-keys/other.crt"
        install_under_secure_boot /etc/kpack-keys/one.key /etc/kpack-keys/other.crt
        # sbsign's words; their capital letter varies between its code paths.
        grep -qixF "$(unsigned_line "sbsign: error in key/certificate chain")" "$log" \
            || fail "the hook did not say that sbsign refused the key pair"
        same_as_stock || fail "the hook replaced a kernel although the certificate is not the key's"
        [[ ! -e $stage/boot/kpack ]] || fail "a failed signature left /boot/kpack behind"
        no_leftovers
        # The right pair signs; then an sbverify that rejects the signed image (as it would a
        # signature sbsign got wrong) puts the stock kernel back at the next sync.
        configure KPACK_SIGN_CERT /etc/kpack-keys/one.crt
        "$KPACK_HOOK_PROGRAM" sync
        signed_with "$image" "$stage/etc/kpack-keys/one.crt" || fail "the matching pair did not sign $image"
        mkdir -p "$work/bin"
        printf '#!/bin/sh\necho "Signature verification failed"\nexit 1\n' > "$work/bin/sbverify"
        chmod +x "$work/bin/sbverify"
        # Another codec: a new image to sign (an unchanged one keeps its signature, unverified again).
        configure KPACK_CODEC zstd
        PATH=$work/bin:$PATH "$KPACK_HOOK_PROGRAM" sync 2> "$log" || { cat "$log" >&2; fail "sync failed when sbverify rejected the image"; }
        cat "$log"
        grep -qxF "$(unsigned_line "sbverify --cert $stage/etc/kpack-keys/one.crt: Signature verification failed")" "$log" \
            || fail "the hook did not say that sbverify rejected the signed image"
        same_as_stock || fail "a rejected signature did not bring the stock kernel back"
        [[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains after restoring the kernel"
        no_leftovers
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
        grep -Eq "^linux +.*/$machine_id/$version_re/linux\$" "$stage/efi/loader/entries/$machine_id-$version.conf" \
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
        grep -Eq "^\s*linux\s+/boot/vmlinuz-$version_re " <<< "$entry" || fail "the default menu entry is not the newest kernel"
        configure KPACK_HOOK no
        "$KPACK_HOOK_PROGRAM" sync
        same_as_stock || fail "disabling did not restore $version"
        cmp -s "$stage/boot/vmlinuz-$old_version" "$work/stock" || fail "disabling did not restore $old_version"
        [[ ! -e $stage/boot/kpack ]] || fail "/boot/kpack remains after restoring every kernel"
        no_leftovers
        ;;
    reinstall)
        # A packed kernel, then its package reinstalled over it while the hook does not pack it
        # (KPACK_KERNELS): a kernel kpack cannot read (a bzip2 payload) is the package's newer one
        # and stays, the older stock copy goes; a damaged kpack image (its record's magic still in
        # it) gets the stock copy back. Every replaced file is synced before its rename, and its
        # directory after (a spy sync(1) first on PATH logs them).
        mkdir -p "$work/spy"
        printf '#!/bin/sh\necho "$@" >> %s/sync.log\nexec /bin/sync "$@"\n' "$work" > "$work/spy/sync"
        chmod +x "$work/spy/sync"
        configure KPACK_HOOK yes
        PATH=$work/spy:$PATH "$KPACK_HOOK_PROGRAM" install "$version"
        is_kpack_image "$image" || fail "not packed"
        stock=$stage/boot/kpack/stock/vmlinuz-$version
        for synced in "$stage/boot/.vmlinuz-$version.kpack-new" "$stock.packed.tmp" \
                      "$stage/boot/kpack/stock/.vmlinuz-$version.kpack-copy" "$stage/boot" "$stage/boot/kpack/stock"; do
            grep -qxF "$synced" "$work/sync.log" || { cat "$work/sync.log" >&2; fail "$synced was not synced"; }
        done
        python3 - "$work/stock" "$work/bzip2.img" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
at = ((b[0x1f1] or 4) + 1) * 512 + struct.unpack_from("<I", b, 0x248)[0]
b[at:at + 10] = b"BZh91AY&SY"  # the payload of a bzip2 kernel, which kpack does not read
open(sys.argv[2], "wb").write(b)
PY
        cp "$work/bzip2.img" "$image"
        configure KPACK_KERNELS "'none-*'"
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log" || { cat "$log" >&2; fail "install failed"; }
        cat "$log"
        cmp -s "$image" "$work/bzip2.img" || fail "the package's reinstalled kernel was replaced by the older stock copy"
        [[ ! -e $stock ]] || fail "the older stock copy stayed"
        grep -q "is a kernel kpack does not read, not a kpack image: kept it" "$log" || fail "no line says what was kept"
        # A damaged kpack image: the stock copy comes back.
        configure KPACK_KERNELS "'*'"
        cp "$work/stock" "$image"
        "$KPACK_HOOK_PROGRAM" install "$version"
        is_kpack_image "$image" || fail "not packed again"
        python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[0x1f1:0x260]=bytes(0x6f); open(p,'wb').write(b)" "$image"
        configure KPACK_KERNELS "'none-*'"
        "$KPACK_HOOK_PROGRAM" install "$version" 2> "$log"
        grep -q "is a kpack image kpack cannot read (damaged?): restored the stock kernel" "$log" || { cat "$log" >&2; fail "the damaged image was not called so"; }
        same_as_stock || fail "the damaged kpack image did not get the stock kernel back"
        no_leftovers
        ;;
    *)
        echo "hook.sh: unknown case '$case'" >&2; exit 2 ;;
esac

echo "hook.sh ($case): PASS"
rm -rf "$stage"  # ~120 MB of modules; the logs stay in $work
