#!/usr/bin/env bash
# package-boot.sh BUILD_DIR DEB_DIR — the packaged kpack, unpacked into a staging root with a real
# Debian kernel package, packs that kernel through its own hook and the image boots to /init.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR DEB_DIR" >&2; exit 2; }
deb=$(ls "$2"/kpack_*_amd64.deb 2>/dev/null | head -n1)
[[ -n $deb ]] || { echo "package-boot.sh: no kpack_*_amd64.deb in $2" >&2; exit 1; }
KPACK_TEST_DEB=$deb exec "$(dirname "${BASH_SOURCE[0]}")/hook.sh" "$1" enabled
