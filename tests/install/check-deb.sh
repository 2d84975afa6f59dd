#!/usr/bin/env bash
# check-deb.sh DEB_DIR — the .deb's metadata and contents: dpkg-deb --info/--contents against what
# the package must hold and depend on, lintian (errors and warnings fail), and the packaged kpack
# run from a temporary root it is unpacked into.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 DEB_DIR" >&2; exit 2; }
deb=$(ls "$1"/kpack_*_amd64.deb 2>/dev/null | head -n1)
[[ -n $deb ]] || { echo "check-deb.sh: no kpack_*_amd64.deb in $1" >&2; exit 1; }
work=$1/check
rm -rf "$work"
mkdir -p "$work"
fail() { echo "check-deb.sh: FAIL: $*" >&2; exit 1; }

# ---- metadata ----
dpkg-deb --info "$deb" | tee "$work/info.txt"
field() { dpkg-deb --field "$deb" "$1"; }
[[ $(field Package) == kpack ]] || fail "Package is not kpack"
[[ $(field Architecture) == amd64 ]] || fail "Architecture is not amd64"
# The packer links the shared zlib, zstd and xz libraries (shlibs:Depends; lz4 is linked statically
# into the host engine too), the stub embeds the static zlib, lz4, zstd and xz archives: Built-Using
# names their source packages at the versions built with.
names() { tr ',' '\n' <<< "$1" | sed 's/^ *//; s/ .*//'; }
depends=$(field Depends)
for lib in libc6 libstdc++6 zlib1g libzstd1 liblzma5; do
    grep -qxF "$lib" <<< "$(names "$depends")" || fail "Depends lacks $lib: $depends"
done
# The kernel hook signs images under Secure Boot with sbsign/sbverify, and converts DKMS's DER
# certificate with openssl.
recommends=$(field Recommends)
for tool in sbsigntool openssl; do
    grep -qxF "$tool" <<< "$(names "$recommends")" || fail "Recommends lacks $tool: $recommends"
done
built_using=$(field Built-Using)
for src in zlib lz4 libzstd xz-utils; do
    grep -qxF "$src" <<< "$(names "$built_using")" || fail "Built-Using lacks $src: $built_using"
done
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles)
for f in /etc/default/kpack /etc/kernel/postinst.d/zz-kpack /etc/kernel/postrm.d/zz-kpack /etc/grub.d/11_kpack \
         /etc/default/grub.d/kpack.cfg; do
    grep -qx "$f" <<< "$conffiles" || fail "$f is not a conffile"
done
for script in postinst prerm postrm; do
    dpkg-deb --ctrl-tarfile "$deb" | tar -tf - "./$script" > /dev/null 2>&1 || fail "no $script maintainer script"
done

# kpack-trial.service is enabled at installation (dh_installsystemd) but not started: it settles
# the trial boot of the boot it runs in, not of an installation.
postinst=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst)
grep -q 'deb-systemd-helper .*enable .*kpack-trial.service' <<< "$postinst" || fail "postinst does not enable kpack-trial.service"
! grep -q 'deb-systemd-invoke .*start .*kpack-trial.service' <<< "$postinst" || fail "postinst starts kpack-trial.service"

# ---- contents: exactly these files (directories aside) ----
dpkg-deb --contents "$deb" | tee "$work/contents.txt"
awk '$1 !~ /^d/ { print $6 }' "$work/contents.txt" | sed 's#^\./#/#' | LC_ALL=C sort > "$work/files.txt"
cat > "$work/expected.txt" <<'LIST'
/etc/default/grub.d/kpack.cfg
/etc/default/kpack
/etc/grub.d/11_kpack
/etc/kernel/postinst.d/zz-kpack
/etc/kernel/postrm.d/zz-kpack
/lib/systemd/system/kpack-trial.service
/usr/bin/kpack
/usr/lib/kernel/install.d/91-kpack.install
/usr/sbin/kpack-kernel-hook
/usr/share/bash-completion/completions/kpack
/usr/share/doc/kpack/changelog.gz
/usr/share/doc/kpack/copyright
/usr/share/lintian/overrides/kpack
/usr/share/man/man1/kpack.1.gz
/usr/share/man/man8/kpack-kernel-hook.8.gz
LIST
diff -u "$work/expected.txt" "$work/files.txt" || fail "the package's files differ from the expected list (- expected, + packaged)"

# ---- lintian, when Debian has it: errors and warnings fail; the rest is shown ----
if command -v lintian > /dev/null; then
    # --fail-on makes lintian's own status count: a tag of those levels, or lintian failing to run.
    status=0
    lintian --info --display-info --tag-display-limit 0 --fail-on error,warning "$deb" > "$work/lintian.txt" || status=$?
    cat "$work/lintian.txt"
    if grep -E '^[EW]: ' "$work/lintian.txt"; then fail "lintian reports errors or warnings"; fi
    [[ $status -eq 0 ]] || fail "lintian exited with status $status"
else
    echo "check-deb.sh: lintian is not installed; skipped (scripts/install-deps.sh installs it)" >&2
    exit 1
fi

# ---- the packaged kpack, run from a temporary root ----
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/kpack" --version | tee "$work/version.txt"
[[ $(head -n1 "$work/version.txt") == "kpack $(field Version)" ]] || fail "kpack --version does not match the package version"
grep -q '^usage: kpack' <<< "$("$work/root/usr/bin/kpack" --help)" || fail "kpack --help from the package"
man --warnings -l "$work/root/usr/share/man/man1/kpack.1.gz" > /dev/null
echo "check-deb.sh: PASS $deb"
