#!/usr/bin/env bash
# render-samples.sh BUILD_DIR [--update-docs | --check] [FILE.md...] — the command output shown in
# the docs, printed now by BUILD_DIR's kpack on a fixed input: Debian's 6.1 cloud kernel (the
# boot.fetch fixture, BUILD_DIR/boot/kernel-6.1.path, else scripts/fetch-kernel.sh).
#
# A sample is the block between `<!-- sample: COMMAND -->` and `<!-- /sample -->` in a markdown
# file (README.md and doc/*.md unless FILEs are named). COMMAND runs under bash in a scratch
# directory with the built `kpack` first on PATH and `vmlinuz`, the kernel; each `vmlinuz.CODEC`
# it names (raw, gzip, lz4, zstd, xz) is packed first with `kpack --CODEC vmlinuz -o vmlinuz.CODEC`.
# The block becomes a fenced `$ COMMAND` line, its stdout and stderr, and the kernel's file name.
# Every run prints the same bytes for a commit and kernel (stub sizes change with the commit,
# which is what the samples are for); what may vary between runs is normalised below, by name.
#
# Without an option it renders into BUILD_DIR/samples/ (one file per markdown file); --update-docs
# rewrites the markdown files; --check fails, showing the difference, when a file's samples are not
# what the binary prints now (the ctest docs.samples). A command that fails fails the script.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() { echo "usage: $0 BUILD_DIR [--update-docs | --check] [FILE.md...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd); shift
mode=render
case ${1:-} in --update-docs) mode=update; shift ;; --check) mode=check; shift ;; -*) usage ;; esac
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=("$repo/README.md" "$repo"/doc/*.md)
fail() { echo "render-samples: $*" >&2; exit 1; }

kpack=$build/packer/kpack
[[ -x $kpack ]] || fail "$kpack is not built (ninja -C $build kpack)"
if [[ -s $build/boot/kernel-6.1.path ]]; then
    vmlinuz=$(cat "$build/boot/kernel-6.1.path")
else
    vmlinuz=$("$repo/scripts/fetch-kernel.sh")
fi
[[ -r $vmlinuz ]] || fail "cannot read the kernel $vmlinuz"

scratch=$(mktemp -d -t kpack-samples.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/bin" "$scratch/run"
ln -s "$kpack" "$scratch/bin/kpack"
ln -s "$vmlinuz" "$scratch/run/vmlinuz"

# What varies between runs of the same binary on the same kernel, made constant: the scratch
# directory's name (commands name files relatively; this catches any absolute path).
normalise() { sed -e "s|$scratch/run/||g" -e "s|$scratch|SCRATCH|g"; }

# run COMMAND: its output, every image it names packed first; a command met again (the same sample
# in another file) is not run again. Sets $packed to what the footnote says of those images.
declare -A outputs=()
run() {
    local command=$1 codec
    packed=
    for codec in raw gzip lz4 zstd xz; do
        [[ $command =~ (^|[^[:alnum:]._-])vmlinuz\.$codec([^[:alnum:]._-]|$) ]] || continue
        packed+="; \`vmlinuz.$codec\`: \`kpack --$codec vmlinuz -o vmlinuz.$codec\`"
        [[ ! -e $scratch/run/vmlinuz.$codec ]] || continue
        "$kpack" "--$codec" "$scratch/run/vmlinuz" -o "$scratch/run/vmlinuz.$codec" > "$scratch/pack.log" 2>&1 ||
            fail "kpack --$codec $vmlinuz failed: $(cat "$scratch/pack.log")"
    done
    if [[ -z ${outputs[$command]+set} ]]; then
        (cd "$scratch/run" && PATH=$scratch/bin:$PATH LC_ALL=C bash -o pipefail -c "$command" 2>&1) > "$scratch/output" ||
            fail "\`$command\` failed: $(cat "$scratch/output")"
        outputs[$command]=$(normalise < "$scratch/output"; echo .)   # the dot keeps trailing newlines
    fi
    printf '%s' "${outputs[$command]%.}"
}

# render FILE: FILE with every sample block rendered anew, on stdout.
render() {
    local file=$1 line command= in_sample=0
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^'<!-- sample: '(.*)' -->'$ ]]; then
            [[ $in_sample == 0 ]] || fail "$file: a sample opens inside another"
            command=${BASH_REMATCH[1]} in_sample=1
            run "$command" > "$scratch/sample"
            printf '%s\n' "$line" '```' "\$ $command"
            cat "$scratch/sample"
            printf '%s\n' '```' "\`vmlinuz\`: Debian's 6.1 cloud kernel, \`$(basename "$vmlinuz")\`$packed." \
                "Written by \`scripts/render-samples.sh\`; \`docs.samples\` fails when kpack prints otherwise."
            continue
        fi
        if [[ $line == '<!-- /sample -->' ]]; then
            [[ $in_sample == 1 ]] || fail "$file: <!-- /sample --> without its <!-- sample: COMMAND -->"
            in_sample=0
        fi
        [[ $in_sample == 1 ]] || printf '%s\n' "$line"
    done < "$file"
    [[ $in_sample == 0 ]] || fail "$file: the sample \`$command\` has no <!-- /sample -->"
}

mkdir -p "$build/samples"
samples=0 stale=0
for file in "${files[@]}"; do
    grep -q '^<!-- sample: ' "$file" || continue
    samples=$((samples + $(grep -c '^<!-- sample: ' "$file")))
    rendered=$build/samples/$(basename "$file")
    render "$file" > "$rendered"
    case $mode in
        render) echo "render-samples: $rendered" ;;
        update) cmp -s "$rendered" "$file" || { cp "$rendered" "$file"; echo "render-samples: updated $file"; } ;;
        check)
            if ! diff -u --label "$file (in the repository)" --label "$file (what kpack prints now)" "$file" "$rendered"; then
                echo "render-samples: $file: a sample is not what kpack prints now;" \
                     "scripts/render-samples.sh $build --update-docs rewrites it" >&2
                stale=1
            fi ;;
    esac
done
[[ $samples -gt 0 ]] || fail "no <!-- sample: COMMAND --> in ${files[*]}"
[[ $stale == 0 ]] || exit 1
[[ $mode != check ]] || echo "render-samples: $samples samples are what kpack prints now"
