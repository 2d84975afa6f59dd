#!/usr/bin/env bash
# build-deb.sh [--check] [OUTDIR] — build kpack's Debian package from this tree; prints its path.
#
# The tree (tracked and new files, as they are in the working tree) is copied to OUTDIR/src with
# packaging/debian as its debian/ directory, and built there with dpkg-buildpackage, so the working
# tree gains no debian/ or build files. OUTDIR defaults to build-deb/. --check also runs the unit
# tests inside the package build (scripts/test.sh runs them anyway). Needs debhelper
# (scripts/install-deps.sh installs it).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=
if [[ ${1:-} == --check ]]; then check=1; shift; fi
[[ $# -le 1 ]] || { echo "usage: $0 [--check] [OUTDIR]" >&2; exit 2; }
out=$(realpath -m "${1:-$repo/build-deb}")
die() { echo "build-deb: $*" >&2; exit 1; }

# The package's version is the project's: debian/changelog must agree with CMakeLists.txt.
version=$(sed -n 's/^project(kpack VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
changelog=$(sed -n '1s/^kpack (\([^)]*\)).*/\1/p' "$repo/packaging/debian/changelog")
[[ -n $version ]] || die "$repo/CMakeLists.txt: no project(kpack VERSION ...) line"
[[ $changelog == "$version" ]] || die "packaging/debian/changelog: version $changelog, but CMakeLists.txt says $version"

src=$out/src/kpack-$version
rm -rf "$out/src"
mkdir -p "$src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard \
        | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf -) | tar -xf - -C "$src"
else
    # Not a git checkout (an exported tree): everything but build directories.
    (cd "$repo" && tar --exclude='./build' --exclude='./build-*' -cf - .) | tar -xf - -C "$src"
fi
rm -rf "$src/debian"
cp -r "$repo/packaging/debian" "$src/debian"

options=(-b -us -uc)
if [[ -z $check ]]; then
    export DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}"
    options+=(-Pnocheck)
fi
export DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}"
(cd "$src" && dpkg-buildpackage "${options[@]}") > "$out/build.log" 2>&1 \
    || { tail -n 30 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }

rm -f "$out"/kpack_*.deb "$out"/kpack_*.buildinfo "$out"/kpack_*.changes
mv "$out"/src/kpack_"$version"_*.deb "$out"/src/kpack_"$version"_*.buildinfo "$out"/src/kpack_"$version"_*.changes "$out"/
rm -rf "$out/src"
ls "$out"/kpack_"$version"_*.deb
