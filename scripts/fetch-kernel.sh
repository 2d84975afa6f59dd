#!/usr/bin/env bash
# fetch-kernel.sh [VERSION_GLOB [FLAVOUR]] — download a real Debian kernel (cloud unless FLAVOUR
# says otherwise) and print its vmlinuz path.
#
#   (no argument)  the kernel linux-image-cloud-amd64 depends on (bookworm: 6.1.0-N-cloud-amd64)
#   6.12           the kernel linux-image-6.12-cloud-amd64 depends on; when there is no such
#                  meta-package, the newest linux-image-6.12*-cloud-amd64 package instead
#   --generic [..]  Debian's generic (-amd64) build of the same kernel: the package named like the
#                  cloud one above with -cloud-amd64 replaced by -amd64 (same ABI number), which
#                  has the drivers the cloud flavour leaves out (vesafb, ...); ~70 MB
#   "" amd64       the generic kernel linux-image-amd64 depends on (Debian's xz-compressed image)
#
# The .deb and its extracted tree live in ${KPACK_CACHE:-$HOME/.cache/kpack} and are reused, so
# repeated runs are offline. stdout carries exactly one line (the absolute vmlinuz path) so that
# callers can use $(fetch-kernel.sh); everything else goes to stderr.
set -euo pipefail

cache=${KPACK_CACHE:-$HOME/.cache/kpack}
generic=
if [[ ${1:-} == --generic ]]; then generic=1; shift; fi
glob=${1:-}
flavour=${2:-cloud-amd64}
log() { echo "fetch-kernel: $*" >&2; }

if [[ -z $glob ]]; then
    meta=linux-image-$flavour
else
    meta=linux-image-${glob}-$flavour
fi

has_candidate() {
    local cand
    cand=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    [[ -n $cand && $cand != "(none)" ]]
}

# The meta-package's linux-image-* dependency is the kernel it currently points at.
resolve() {
    local pkg=
    if has_candidate "$meta"; then
        pkg=$(apt-cache depends "$meta" | sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -n1)
    fi
    if [[ -z $pkg && -n $glob ]]; then
        # No meta-package for this glob: take the newest signed image package. The -dbg and
        # -unsigned variants carry the same kernel (or none) under another name.
        pkg=$(apt-cache pkgnames linux-image- \
            | grep -E "^linux-image-${glob//./\\.}.*-$flavour\$" \
            | grep -Ev -- '-(dbg|unsigned)$' \
            | sort -V | tail -n1 || true)
    fi
    [[ -z $pkg ]] || has_candidate "$pkg" || pkg=
    echo "$pkg"
}

# Only refresh the package lists when apt knows nothing about what we want: `apt-get update`
# needs root and network, and the lists are normally already there.
pkg=$(resolve)
if [[ -z $pkg ]]; then
    log "apt knows no candidate for ${glob:-default}; running apt-get update"
    apt-get update >&2
    pkg=$(resolve)
fi
[[ -n $pkg ]] || { log "no kernel package found for '${glob:-default}'"; exit 1; }
if [[ -n $generic ]]; then
    pkg=${pkg%-cloud-amd64}-amd64
    has_candidate "$pkg" || { log "no candidate for $pkg (the generic twin of the cloud kernel)"; exit 1; }
fi

# The pool file name of the candidate version: it changes whenever the package is rebuilt.
deb=$(apt-cache show --no-all-versions "$pkg" | sed -n 's/^Filename: //p' | head -n1)
deb=${deb##*/}
[[ -n $deb ]] || { log "apt-cache show $pkg gave no Filename"; exit 1; }
log "package $pkg -> $deb"

mkdir -p "$cache"
if [[ ! -s $cache/$deb ]]; then
    # apt-get download drops privileges to _apt when run as root; a private world-writable
    # scratch directory avoids its "couldn't be accessed by user '_apt'" sandbox warning.
    tmp=$(mktemp -d "$cache/.dl.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    chmod 1777 "$tmp"
    (cd "$tmp" && apt-get download "$pkg" >&2)
    mv "$tmp"/*.deb "$cache/$deb"
    rm -rf "$tmp"
    trap - EXIT
fi

# Extract into a directory named after the .deb so that different versions never mix; extract to a
# temporary name first so an interrupted run does not leave a half tree that looks complete.
tree=$cache/${deb%.deb}
if [[ ! -d $tree ]]; then
    part=$(mktemp -d "$cache/.x.XXXXXX")
    trap 'rm -rf "$part"' EXIT
    dpkg-deb -x "$cache/$deb" "$part"
    mv -T "$part" "$tree"
    trap - EXIT
fi

vmlinuz=$(find "$tree/boot" -maxdepth 1 -name 'vmlinuz-*' -type f | sort | head -n1)
[[ -n $vmlinuz ]] || { log "no boot/vmlinuz-* in $deb"; exit 1; }
realpath "$vmlinuz"
