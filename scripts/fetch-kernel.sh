#!/usr/bin/env bash
# fetch-kernel.sh [--suite SUITE [--refresh]] [--generic] [--flavour FLAVOUR] [--install-set DIR]
#                 [VERSION_GLOB [FLAVOUR]]
# fetch-kernel.sh --suite SUITE --apt-options
# — download a real Debian kernel (cloud unless FLAVOUR says otherwise) and print its vmlinuz path.
#
#   (no argument)  the kernel linux-image-cloud-amd64 depends on (bookworm: 6.1.0-N-cloud-amd64)
#   6.12           the kernel linux-image-6.12-cloud-amd64 depends on; when there is no such
#                  meta-package, the newest linux-image-6.12*-cloud-amd64 package instead
#   --generic [..]  Debian's generic (-amd64) build of the same kernel: the package named like the
#                  cloud one above with -cloud-amd64 replaced by -amd64 (same ABI number), which
#                  has the drivers the cloud flavour leaves out (vesafb, ...); ~70 MB
#   "" amd64       the generic kernel linux-image-amd64 depends on (Debian's xz-compressed image);
#                  --flavour amd64 says the same without an empty argument
#   --suite SUITE  the same from another suite of the archive the machine's apt sources name
#                  (trixie, trixie-backports, sid, experimental), through a private sources list and
#                  state in the cache: the machine's own apt state is never touched. Its lists are
#                  refreshed when they are older than 12 hours, or always with --refresh (what a
#                  check for the newest kernel wants); a refresh that fails falls back on the lists
#                  there are, with a warning.
#   --apt-options  only refresh SUITE's lists as above and print the apt-get options that use
#                  them, one a line, for other downloads from that suite
#
# Since 6.19 linux-image-ABI-FLAVOUR is a meta package and the image is in linux-binary-ABI-FLAVOUR,
# as /usr/lib/modules/ABI/vmlinuz; before, linux-image-ABI-FLAVOUR holds /boot/vmlinuz-ABI. Either
# way the one package that holds the image is downloaded. --install-set DIR also puts into DIR every
# .deb that installing the kernel offline takes (`apt-get install ./*.deb` on a system of the
# suite): the linux-image package, and since 6.19 its linux-binary, linux-base-ABI and
# linux-modules packages and the suite's linux-base, whose linux-run-hooks the scripts call.
#
# The .deb and its extracted tree live in ${KPACK_CACHE:-$HOME/.cache/kpack} under the pool file's
# name, which carries the package version, and are reused, so repeated runs are offline. stdout
# carries exactly one line (the absolute vmlinuz path) so that callers can use $(fetch-kernel.sh);
# everything else goes to stderr.
set -euo pipefail

cache=${KPACK_CACHE:-$HOME/.cache/kpack}
generic= suite= refresh= flavour= install_set= apt_options=
while [[ $# -gt 0 ]]; do
    case $1 in
        --generic) generic=1; shift ;;
        --apt-options) apt_options=1; shift ;;
        --suite) [[ $# -ge 2 ]] || { echo "fetch-kernel: --suite needs a suite" >&2; exit 2; }; suite=$2; shift 2 ;;
        --refresh) refresh=1; shift ;;
        --install-set) [[ $# -ge 2 ]] || { echo "fetch-kernel: --install-set needs a directory" >&2; exit 2; }; install_set=$2; shift 2 ;;
        --flavour) [[ $# -ge 2 ]] || { echo "fetch-kernel: --flavour needs a flavour" >&2; exit 2; }; flavour=$2; shift 2 ;;
        *) break ;;
    esac
done
glob=${1:-}
flavour=${2:-${flavour:-cloud-amd64}}
log() { echo "fetch-kernel: $*" >&2; }

# apt's options for the suite's private state; none for the machine's own.
apt_opts=()
if [[ -n $suite ]]; then
    state=$cache/apt/$suite
    apt_opts=(-o "Dir::Etc::sourcelist=$state/sources.list" -o Dir::Etc::sourceparts=-
              -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache" -o Dir::State::status=/dev/null)
    # As root, apt drops to _apt for its downloads, which cannot enter a cache under /root.
    [[ $(id -u) -ne 0 ]] || apt_opts+=(-o APT::Sandbox::User=root)
fi

# The archive the machine's apt already uses: the first deb822 URIs or one-line "deb" entry that
# serves Debian's main archive (not its security archive).
archive_uri() {
    local uri
    uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs: *\([^ ]*\).*/\1/p' |
        grep -v security | head -n1 || true)
    [[ -n $uri ]] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\).*/\2/p' | grep -v security | head -n1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

refresh_suite_lists() {
    mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(archive_uri) $suite main" \
        > "$state/sources.list"
    local stamp=$state/lists/.updated
    if [[ -z $refresh && -e $stamp && -n $(find "$stamp" -mmin -720) ]]; then return; fi
    log "refreshing the package lists of $suite"
    if apt-get "${apt_opts[@]}" update >&2; then
        touch "$stamp"
    elif [[ -e $stamp ]]; then
        log "warning: could not refresh $suite's lists; using those of $(date -r "$stamp" -u '+%F %R UTC')"
    else
        log "cannot read $suite's package lists"; exit 1
    fi
}
[[ -z $suite ]] || refresh_suite_lists
if [[ -n $apt_options ]]; then
    [[ -n $suite ]] || { log "--apt-options needs --suite"; exit 2; }
    printf '%s\n' "${apt_opts[@]}"
    exit 0
fi

if [[ -z $glob ]]; then
    meta=linux-image-$flavour
else
    meta=linux-image-${glob}-$flavour
fi

has_candidate() {
    local cand
    cand=$(apt-cache "${apt_opts[@]}" policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    [[ -n $cand && $cand != "(none)" ]]
}

# The meta-package's linux-image-* dependency is the kernel it currently points at.
resolve() {
    local pkg=
    if has_candidate "$meta"; then
        pkg=$(apt-cache "${apt_opts[@]}" depends "$meta" |
            sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
        # A versioned package of its own (7.3-cloud-amd64 in experimental) depends on no image.
        [[ -n $pkg || -z $glob ]] || pkg=$meta
    fi
    if [[ -z $pkg && -n $glob ]]; then
        # No meta-package for this glob: take the newest signed image package of this flavour (the
        # ABI has no dash after the glob, so -amd64 does not also match -cloud-amd64). The -dbg and
        # -unsigned variants carry the same kernel (or none) under another name.
        pkg=$(apt-cache "${apt_opts[@]}" pkgnames linux-image- \
            | grep -E "^linux-image-${glob//./\\.}([.][^-]*|[+][^-]*)?(-[0-9]+)?-$flavour\$" \
            | sort -V | tail -n1 || true)
    fi
    [[ -z $pkg ]] || has_candidate "$pkg" || pkg=
    echo "$pkg"
}

# Only refresh the machine's package lists when apt knows nothing about what we want: `apt-get
# update` needs root and network, and the lists are normally already there.
pkg=$(resolve)
if [[ -z $pkg && -z $suite ]]; then
    log "apt knows no candidate for ${glob:-default}; running apt-get update"
    apt-get update >&2
    pkg=$(resolve)
fi
[[ -n $pkg ]] || { log "no kernel package found for '${glob:-default}'${suite:+ in $suite}"; exit 1; }
if [[ -n $generic ]]; then
    pkg=${pkg%-cloud-amd64}-amd64
    has_candidate "$pkg" || { log "no candidate for $pkg (the generic twin of the cloud kernel)"; exit 1; }
fi
# Since 6.19 the image itself is in linux-binary-ABI-FLAVOUR.
image_pkg=$pkg
abi=${pkg#linux-image-}
binary=linux-binary-$abi
! has_candidate "$binary" || pkg=$binary

# download PACKAGE: its candidate's .deb into the cache, under the pool file's name (which changes
# whenever the package is rebuilt); prints that name.
download() {
    local deb tmp
    deb=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$1" | sed -n 's/^Filename: //p' | head -n1)
    deb=${deb##*/}
    [[ -n $deb ]] || { log "apt-cache show $1 gave no Filename"; exit 1; }
    mkdir -p "$cache"
    if [[ ! -s $cache/$deb ]]; then
        # apt-get download drops privileges to _apt when run as root; a private world-writable
        # scratch directory avoids its "couldn't be accessed by user '_apt'" sandbox warning.
        tmp=$(mktemp -d "$cache/.dl.XXXXXX")
        chmod 1777 "$tmp"
        (cd "$tmp" && apt-get "${apt_opts[@]}" download "$1" >&2) || { rm -rf "$tmp"; exit 1; }
        mv "$tmp"/*.deb "$cache/$deb"
        rm -rf "$tmp"
    fi
    echo "$deb"
}
deb=$(download "$pkg")
log "package $pkg -> $deb"

if [[ -n $install_set ]]; then
    set_pkgs=("$image_pkg")
    [[ $pkg == "$image_pkg" ]] || set_pkgs+=("$pkg" "linux-base-$abi" "linux-modules-$abi" linux-base)
    mkdir -p "$install_set"
    for p in "${set_pkgs[@]}"; do
        f=$(download "$p")
        cp -f "$cache/$f" "$install_set/"
        log "install set: $f"
    done
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

vmlinuz=$(find "$tree/boot" "$tree/usr/lib/modules" -maxdepth 2 \( -path '*/boot/vmlinuz-*' -o -path \
    '*/modules/*/vmlinuz' \) -type f 2>/dev/null | sort | head -n1 || true)
[[ -n $vmlinuz ]] || { log "no boot/vmlinuz-* or usr/lib/modules/*/vmlinuz in $deb"; exit 1; }
realpath "$vmlinuz"
