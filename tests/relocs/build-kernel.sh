#!/usr/bin/env bash
# build-kernel.sh [SERIES] — build a small x86-64 kernel from Debian's linux-source-SERIES package
# (default 6.1) and print the directory holding the results (one line on stdout; everything else
# goes to stderr).
#
# The directory, ${KPACK_CACHE:-$HOME/.cache/kpack}/kernel-build/<source version>-<config rev>/,
# holds:
#   vmlinux          the build tree's vmlinux: linked with --emit-relocs (CONFIG_RELOCATABLE), so it
#                    keeps its .rela.* sections (kernels up to 6.4)
#   vmlinux.relocs   arch/x86/boot/compressed/vmlinux.relocs, the table the kernel's own
#                    arch/x86/tools/relocs computed from that vmlinux
#   bzImage          the stock image (its payload: the stripped vmlinux, then the same table)
#   config           the .config used
# It is built once per source package version and reused: CI rebuilds only when it is missing.
#
# The kernel: `make tinyconfig` for x86_64, plus what makes the relocation table interesting and the
# kernel bootable on QEMU's serial console: 64BIT, RELOCATABLE, RANDOMIZE_BASE, SMP (a zero-based
# per-CPU section, hence the inverse-32 list), PRINTK, TTY, SERIAL_8250(_CONSOLE), BINFMT_ELF,
# BLK_DEV_INITRD with gzip. The source is the installed /usr/src/linux-source-SERIES.tar.xz
# (scripts/install-deps.sh installs linux-source-6.1), or the package downloaded into the cache.
# The build runs under `nice` with ${KPACK_BUILD_JOBS:-$(nproc)} jobs.
set -euo pipefail

series=${1:-6.1}
# Bump when the configuration below changes: the cache key then changes and the kernel is rebuilt.
config_rev=r1

cache=${KPACK_CACHE:-$HOME/.cache/kpack}
log() { echo "build-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

pkg=linux-source-$series
installed=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$pkg" 2>/dev/null || true)
if [[ $installed == installed\ * ]]; then
    version=${installed#installed }
    tarball=/usr/src/linux-source-$series.tar.xz
else
    version=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    [[ -n $version && $version != "(none)" ]] || die "$pkg is not installed and apt knows no candidate (run scripts/install-deps.sh)"
    tarball=$cache/kernel-build/linux-source-${version}.tar.xz
fi

out=$cache/kernel-build/linux-source-${version}-${config_rev}
done_already() { [[ -s $out/vmlinux && -s $out/vmlinux.relocs && -s $out/bzImage ]]; }
if done_already; then
    log "cached: $out"
    echo "$out"
    exit 0
fi

# One build at a time (two build directories may run their tests at once); then look again.
mkdir -p "$cache/kernel-build"
exec 9> "$cache/kernel-build/.lock"
flock 9
if done_already; then
    log "cached (built meanwhile): $out"
    echo "$out"
    exit 0
fi
work=$(mktemp -d "$cache/kernel-build/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ ! -s $tarball ]]; then
    # Not installed: fetch the package into the cache (no root needed) and keep only the tarball.
    log "downloading $pkg $version"
    chmod 1777 "$work"   # apt-get download runs as _apt when started by root
    (cd "$work" && apt-get download "$pkg=$version" >&2)
    dpkg-deb --fsys-tarfile "$work"/*.deb | tar -xO "./usr/src/linux-source-$series.tar.xz" > "$tarball.part"
    mv "$tarball.part" "$tarball"
    rm -f "$work"/*.deb
fi

start=$SECONDS
log "extracting $tarball"
# Documentation is large and unused by the build, except the Kconfig files the top Kconfig sources.
tar -xf "$tarball" -C "$work" --exclude="linux-source-$series/Documentation/*/*"
src=$work/linux-source-$series
[[ -f $src/Makefile ]] || die "$tarball: no linux-source-$series/Makefile inside"
log "extracted in $((SECONDS - start)) s"

# From 6.5 the post-link pass strips the .rela sections from vmlinux once relocs has read them:
# keep them, so that the vmlinux handed to kpack is the very file relocs read.
postlink=$src/arch/x86/Makefile.postlink
if [[ -f $postlink ]] && grep -q 'call cmd,strip_relocs' "$postlink"; then
    sed -i '/call cmd,strip_relocs/d' "$postlink"
fi

jobs=${KPACK_BUILD_JOBS:-$(nproc)}
mk=(nice -n 10 make -C "$src" -s ARCH=x86_64 -j"$jobs")
"${mk[@]}" tinyconfig >&2
"$src/scripts/config" --file "$src/.config" \
    --enable 64BIT --enable RELOCATABLE --enable RANDOMIZE_BASE --enable SMP \
    --enable PRINTK --enable TTY --enable SERIAL_8250 --enable SERIAL_8250_CONSOLE \
    --enable BINFMT_ELF --enable BLK_DEV_INITRD --enable RD_GZIP
"${mk[@]}" olddefconfig >&2
for opt in 64BIT RELOCATABLE RANDOMIZE_BASE SMP; do
    grep -qx "CONFIG_$opt=y" "$src/.config" || die "CONFIG_$opt did not stick in the configuration"
done

start=$SECONDS
log "building bzImage with $jobs jobs"
"${mk[@]}" bzImage >&2
log "built in $((SECONDS - start)) s"

stage=$work/result
mkdir "$stage"
cp "$src/vmlinux" "$src/arch/x86/boot/compressed/vmlinux.relocs" "$src/arch/x86/boot/bzImage" "$stage/"
cp "$src/.config" "$stage/config"
rm -rf "$out"
mv -T "$stage" "$out"
# Older source versions and configurations are not needed again.
for stale in "$cache/kernel-build"/linux-source-$series.*; do
    [[ -e $stale && $stale != "$out" && $stale != "$tarball" ]] || continue
    log "removing stale $stale"
    rm -rf "$stale"
done
log "results in $out"
echo "$out"
