#!/usr/bin/env bash
# check-install.sh BUILD_DIR — `cmake --install` into a staging prefix installs exactly kpack, its
# man page and its bash completion (and the kernel-hooks component exactly the hook files); the
# installed kpack runs; `man -l` renders the page, which names every option --help lists.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(realpath "$1")
work=$build/install/files
rm -rf "$work"
mkdir -p "$work"
fail() { echo "check-install.sh: FAIL: $*" >&2; exit 1; }

# Every file and symlink under ROOT, relative to it, sorted.
listing() { (cd "$1" && find . -mindepth 1 ! -type d -printf '%P\n' | LC_ALL=C sort); }
expect() {
    local what=$1 root=$2; shift 2
    diff -u <(printf '%s\n' "$@") <(listing "$root") > "$work/$what.diff" \
        || { cat "$work/$what.diff" >&2; fail "$what: installed files differ from the expected list (- expected, + installed)"; }
    echo "check-install: $what: $(listing "$root" | tr '\n' ' ')"
}

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
expect default "$prefix" bin/kpack share/bash-completion/completions/kpack share/man/man1/kpack.1

# The hooks' component, as the Debian package installs it (prefix /usr: /etc stays /etc).
DESTDIR=$work/hooks cmake --install "$build" --prefix /usr --component kernel-hooks > "$work/hooks.log"
expect kernel-hooks "$work/hooks" \
    etc/default/grub.d/kpack.cfg etc/default/kpack etc/grub.d/11_kpack etc/kernel/postinst.d/zz-kpack \
    etc/kernel/postrm.d/zz-kpack lib/systemd/system/kpack-trial.service \
    usr/lib/kernel/install.d/91-kpack.install usr/sbin/kpack-kernel-hook usr/share/man/man8/kpack-kernel-hook.8
for f in usr/sbin/kpack-kernel-hook etc/kernel/postinst.d/zz-kpack etc/kernel/postrm.d/zz-kpack \
         usr/lib/kernel/install.d/91-kpack.install etc/grub.d/11_kpack; do
    [[ -x $work/hooks/$f ]] || fail "$f is not executable"
done

# The installed binary runs from there; --version names kpack's version and every codec library.
kpack=$prefix/bin/kpack
"$kpack" --version | tee "$work/version.txt"
grep -Eq '^kpack [0-9]+\.[0-9]+\.[0-9]+$' "$work/version.txt" || fail "--version: no 'kpack X.Y.Z' line"
for lib in zlib lz4 zstd liblzma; do
    grep -Eq "\\b$lib [0-9]+\\.[0-9]+" "$work/version.txt" || fail "--version does not name $lib's version"
done
"$kpack" --help > "$work/help.txt"

# man -l renders the installed page without warnings; it has the sections a man page needs, and
# every option of --help (they come from one source, so this guards the renderer, not the text).
man_page=$prefix/share/man/man1/kpack.1
MANWIDTH=100 man --warnings -l "$man_page" > "$work/man.txt" 2> "$work/man.err" || fail "man -l $man_page failed"
[[ ! -s $work/man.err ]] || { cat "$work/man.err" >&2; fail "man -l $man_page printed warnings"; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' 'SEE ALSO'; do
    grep -q "^$section\$" "$work/man.txt" || fail "the man page has no $section section"
done
for option in $(grep -oE '^  -[-a-z0-9]+(, --[-a-z0-9]+)?' "$work/help.txt" | tr -d ','); do
    grep -qe "$option" "$work/man.txt" || fail "the man page does not document $option"
done
man --warnings -l "$work/hooks/usr/share/man/man8/kpack-kernel-hook.8" > /dev/null 2> "$work/man8.err"
[[ ! -s $work/man8.err ]] || { cat "$work/man8.err" >&2; fail "kpack-kernel-hook(8) renders with warnings"; }
echo "check-install: PASS ($(wc -l < "$work/man.txt") lines of man page)"
