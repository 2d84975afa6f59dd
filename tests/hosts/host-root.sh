#!/usr/bin/env bash
# host-root.sh SUITE BUILD_DIR — another Debian release as the build host: a root of SUITE
# (mmdebstrap), scripts/install-deps.sh run inside it as a user's first step, this checkout copied
# in, and in a chroot there: scripts/demo.sh (build kpack with that release's compiler and static
# codec archives, fetch its cloud kernel, pack it, boot it under QEMU with two CPUs) and the unit
# tests (ctest -L unit -LE boot). The root is cached in ${KPACK_CACHE:-~/.cache/kpack}/host-root,
# keyed by SUITE and install-deps.sh, and built once under a lock; the checkout and its build are
# fresh each run. Needs root (chroot, mmdebstrap) and the archive. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 SUITE BUILD_DIR" >&2; exit 2; }
suite=$1 build=$(realpath "$2")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "host-root ($suite): $*" >&2; }
die() { say "FAIL: $*"; exit 1; }
[[ $(id -u) -eq 0 ]] || { say "SKIP: needs root (chroot)"; exit 77; }
command -v mmdebstrap > /dev/null || { say "SKIP: mmdebstrap not installed"; exit 77; }

cache=${KPACK_CACHE:-$HOME/.cache/kpack}/host-root
key=$( { echo "$suite"; cat "$repo/scripts/install-deps.sh"; } | sha256sum | cut -c1-16)
root=$cache/$suite-$key
mkdir -p "$cache"
exec 9> "$root.lock"
flock 9

# The archive this machine's apt uses (fetch-kernel.sh reads it the same way).
archive=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security |
    head -n1 || true)
if [[ ! -e $root/.ready ]]; then
    start=$EPOCHSECONDS
    rm -rf "$root" "$root.tmp"
    # install-deps.sh inside the root, as a user's first command would run it there; mmdebstrap
    # mounts /proc and /dev for its hooks.
    mmdebstrap --variant=apt --include=git,ca-certificates \
        --customize-hook="copy-in $repo/scripts/install-deps.sh /tmp" \
        --customize-hook='chroot "$1" /tmp/install-deps.sh' \
        "$suite" "$root.tmp" "${archive:-http://deb.debian.org/debian}" > "$cache/$suite-$key.log" 2>&1 \
        || { tail -n 20 "$cache/$suite-$key.log" >&2; die "mmdebstrap $suite failed (log: $cache/$suite-$key.log)"; }
    mv "$root.tmp" "$root"
    touch "$root/.ready"
    say "built $root in $((EPOCHSECONDS - start)) s"
fi

# A fresh copy of the checkout (what git tracks, and new files it does not ignore) and its .git.
rm -rf "$root/src"
mkdir -p "$root/src"
(cd "$repo" && git ls-files -co --exclude-standard | grep -v '^Testing/' | tar cf - -T -) | tar xf - -C "$root/src"
cp -a "$repo/.git" "$root/src/.git"  # a clone, as a user's: render-matrices.sh names the commit
cp /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null || true

mounted=()
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}" 2> /dev/null || true; done; }
trap cleanup EXIT
for fs in proc sys dev; do
    mount --rbind "/$fs" "$root/$fs" && mount --make-rslave "$root/$fs" && mounted+=("$root/$fs")
done

log=$build/hosts/$suite.log
mkdir -p "$(dirname "$log")"
say "scripts/demo.sh and the unit tests in $root (log: $log)"
status=0
chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root KPACK_CACHE=/var/cache/kpack bash -c '
    set -e
    cd /src
    . /etc/os-release && echo "host-root: $PRETTY_NAME, $(gcc --version | head -n1), $(cmake --version | head -n1)"
    scripts/demo.sh
    cmake --build build -j2
    ctest --test-dir build -L unit -LE boot -j2 --output-on-failure
' > "$log" 2>&1 || status=$?
grep -E '^host-root:|^boot.sh: PASS|tests passed|kpack: cpus:' "$log" || true
[[ $status -eq 0 ]] || { tail -n 30 "$log" >&2; die "demo or unit tests failed in the $suite root (status $status)"; }
grep -q '^boot.sh: PASS: KPACK_INIT_OK' "$log" || die "the demo's boot did not reach /init"
grep -q '100% tests passed' "$log" || die "not every unit test passed"
say "PASS"
