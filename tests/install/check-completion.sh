#!/usr/bin/env bash
# check-completion.sh BUILD_DIR — the installed bash completion completes kpack's subcommands,
# options and file arguments, and bash-completion's on-demand loader finds it under the prefix.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(realpath "$1")
work=$build/install/completion
rm -rf "$work"
mkdir -p "$work/prefix" "$work/files"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
script=$work/prefix/share/bash-completion/completions/kpack
failures=0

# complete WORDS... -> what the completion offers for the last word (sorted, one line).
complete_words() {
    bash -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _kpack
        printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " " | sed "s/ $//"
    ' complete "$script" "$@"
}
check() {
    local expected=$1; shift
    local got
    got=$(cd "$work/files" && complete_words "$@")
    if [[ $got == "$expected" ]]; then
        echo "check-completion: ok   '$*' -> '$got'"
    else
        echo "check-completion: FAIL '$*' -> '$got', expected '$expected'" >&2
        failures=$((failures + 1))
    fi
}

touch "$work/files/vmlinux" "$work/files/vmlinuz-6.1" "$work/files/bzImage.old"
check "bzImage.old extract help info keys stats vmlinux vmlinuz-6.1" kpack ''
check "extract"                                     kpack ex
check "info"                                        kpack in
check "--layout --level --lz4"                      kpack --l
check "compact in-place"                            kpack --layout ''
check "bzImage.old extract help info keys stats vmlinux vmlinuz-6.1" kpack --layout compact ''
check "--gzip"                                      kpack --gz
check "bzImage.old vmlinux vmlinuz-6.1"             kpack -o ''
check "vmlinux vmlinuz-6.1"                         kpack --zstd vm
check "vmlinux vmlinuz-6.1"                         kpack --lz4 vmlinux -o vm
check ""                                            kpack --level ''
check ""                                            kpack --kernel-address 0x
check "--relocs"                                    kpack extract vmlinuz-6.1 -o vmlinux --re
check "bzImage.old vmlinux vmlinuz-6.1"             kpack extract ''
check "bzImage.old extract help info keys stats vmlinux vmlinuz-6.1" kpack --level 9 ''
check "bzImage.old vmlinux vmlinuz-6.1"             kpack --raw info ''
check "--version"                                   kpack --vers
check "--from"                                      kpack stats --fr
check "--efivars"                                   kpack keys --ef
check "--efivars --help --pem -h"                   kpack keys -
check "--output"                                    kpack --ou
check "--help --output --relocs -h -o"              kpack extract vmlinuz-6.1 -
check "--help -h"                                   kpack info -
check "--threads"                                   kpack vmlinux --th
check ""                                            kpack vmlinux --fr      # --from is stats'
check "extract help info keys pack stats"                kpack help ''
check ""                                            kpack help info ''
mkdir -p "$work/files/setup_data" && touch "$work/files/setup.bin"   # --from DIR: directories only
check "setup_data"                                  kpack stats --from set
touch "$work/files/-vmlinux"                                    # after --, file names
check "-vmlinux"                                    kpack -o out -- -v

# bash-completion finds the script on demand through XDG_DATA_DIRS, as for /usr and /usr/local.
loader=/usr/share/bash-completion/bash_completion
if [[ -r $loader ]]; then
    found=$(XDG_DATA_DIRS=$work/prefix/share bash -c "source $loader; __load_completion kpack && complete -p kpack" 2>&1 || true)
    if [[ $found == "complete -o filenames -F _kpack kpack" ]]; then
        echo "check-completion: ok   bash-completion loads it from $work/prefix/share"
    else
        echo "check-completion: FAIL bash-completion did not load it: $found" >&2
        failures=$((failures + 1))
    fi
else
    echo "check-completion: FAIL $loader missing (scripts/install-deps.sh installs bash-completion)" >&2
    failures=$((failures + 1))
fi

[[ $failures -eq 0 ]] || { echo "check-completion: $failures failure(s)" >&2; exit 1; }
echo "check-completion: PASS"
