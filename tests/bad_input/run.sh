#!/usr/bin/env bash
# run.sh KPACK [STOCK_BZIMAGE] — the bad-input table: feed kpack every kind of broken input and
# hostile environment, and require of each run
#   - an exit status that is neither 0 nor a signal (1..127),
#   - exactly one line on stderr, naming the file concerned and matching the expected problem,
#   - no partial output: the output directory holds what it held before, and a pre-existing
#     output file is byte-identical.
# The full-disk case needs root; without it the case is skipped, and under CI that skip fails the run
# unless tests/allowed-skips.txt names it.
set -uo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 KPACK [STOCK_BZIMAGE]" >&2; exit 2; }
kpack=$(realpath "$1")
stock=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d -t kpack-bad-input.XXXXXX)
mounted=
cleanup() {
    [[ -n $mounted ]] && umount "$mounted"
    rm -rf "$work"
}
trap cleanup EXIT
cases=$work/cases
python3 "$here/make_cases.py" "$cases" || exit 1

passed=0 failed=0 skipped=0
source "$here/../lib/skip.sh"
# Under CI a skip not in tests/allowed-skips.txt counts as a failure.
skip() { if kpack_skip_refused "$1" "$2"; then failed=$((failed + 1)); else skipped=$((skipped + 1)); fi; }

# expect_failure NAME REGEX NAMED_FILE OUTPUT -- kpack arguments...
# OUTPUT is the output path kpack is given; when its directory exists, it is pre-filled.
expect_failure() {
    local name=$1 regex=$2 named=$3 output=$4
    shift 5
    local out_dir before after status problems=()
    out_dir=$(dirname "$output")
    if [[ -d $out_dir ]]; then
        printf 'previous output of %s\n' "$name" > "$output"
        cp "$output" "$work/expected-output"
    fi
    before=$(ls -A "$out_dir" 2>/dev/null)

    "$kpack" "$@" > "$work/stdout" 2> "$work/stderr"
    status=$?

    after=$(ls -A "$out_dir" 2>/dev/null)
    local lines
    lines=$(wc -l < "$work/stderr")
    local line
    line=$(head -n 1 "$work/stderr")
    [[ $status -ne 0 ]] || problems+=("exit status 0")
    [[ $status -lt 128 ]] || problems+=("killed by a signal (exit status $status)")
    [[ $lines -eq 1 ]] || problems+=("$lines lines on stderr instead of 1")
    [[ $line == *"$named"* ]] || problems+=("the error does not name $named")
    [[ $line =~ $regex ]] || problems+=("the error does not match /$regex/")
    [[ $before == "$after" ]] || problems+=("the output directory changed: [$before] -> [$after]")
    if [[ -d $out_dir ]] && ! cmp -s "$output" "$work/expected-output"; then
        problems+=("the pre-existing output was modified")
    fi
    if [[ ${#problems[@]} -eq 0 ]]; then
        echo "ok   $name: $line"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $(IFS=';'; echo "${problems[*]}")"
        sed 's/^/       stderr: /' "$work/stderr"
        failed=$((failed + 1))
    fi
}

mkdir -p "$work/out"
out=$work/out/kernel.img

# --- Malformed vmlinux files (make_cases.py).
while IFS=$'\t' read -r file regex; do
    expect_failure "$file" "$regex" "$cases/$file" "$out" -- --lz4 --level 1 "$cases/$file" -o "$out"
done < "$cases/cases.tsv"

# A valid ELF whose segments span 3.7 GiB, more than a raw image may claim: the error names the
# kernel, whose layout is at fault, and the span.
expect_failure "huge-span.elf (raw)" "span" "$cases/huge-span.elf" "$out" -- --raw "$cases/huge-span.elf" -o "$out"

# --- The file system gets in the way.
expect_failure "directory" "is a directory" "$cases" "$out" -- --lz4 "$cases" -o "$out"
expect_failure "missing-file" "no such file" "$work/nope.elf" "$out" -- --lz4 "$work/nope.elf" -o "$out"
if [[ $(id -u) -ne 0 ]]; then
    cp "$cases/good.elf" "$work/unreadable.elf"
    chmod 000 "$work/unreadable.elf"
    expect_failure "unreadable-file" "permission denied" "$work/unreadable.elf" "$out" -- \
        --lz4 "$work/unreadable.elf" -o "$out"
else
    # chmod 000 does not stop root; reading /proc/self/mem at offset 0 fails (EIO) for anyone.
    expect_failure "unreadable-file" "read failed" "/proc/self/mem" "$out" -- --lz4 /proc/self/mem -o "$out"
fi
# --- A bad --sbat file: missing, or empty; the error names the SBAT file.
expect_failure "sbat-missing" "no such file" "$work/nope.csv" "$out" -- --lz4 --sbat "$work/nope.csv" "$cases/good.elf" -o "$out"
: > "$work/empty.csv"
expect_failure "sbat-empty" "1 byte to 64 KiB" "$work/empty.csv" "$out" -- --lz4 --sbat "$work/empty.csv" "$cases/good.elf" -o "$out"
expect_failure "missing-output-directory" "cannot create a temporary file" "$work/no/such/dir/kernel.img" \
    "$work/no/such/dir/kernel.img" -- --lz4 "$cases/good.elf" -o "$work/no/such/dir/kernel.img"
if [[ $(id -u) -eq 0 ]] && mkdir -p "$work/full" && mount -t tmpfs -o size=64k kpack-full "$work/full" 2>/dev/null; then
    mounted=$work/full
    # A raw image is over 1 MiB: it cannot fit in 64 KiB.
    expect_failure "full-disk" "No space left on device" "$work/full/kernel.img" "$work/full/kernel.img" -- \
        --raw "$cases/good.elf" -o "$work/full/kernel.img"
else
    skip "full-disk" "needs root to mount a small tmpfs"
fi

# --- Broken boot images, read by pack (as input) and by extract.
"$kpack" --zstd --level 1 "$cases/good.elf" -o "$work/good.img" 2>/dev/null || { echo "FAIL: cannot pack good.elf"; exit 1; }
payload_range() {  # prints "offset length" of the payload in the file
    python3 -c 'import struct,sys
d=open(sys.argv[1],"rb").read(0x260)
setup=((d[0x1F1] or 4)+1)*512
off,length=struct.unpack_from("<II",d,0x248)
print(setup+off, length)' "$1"
}
# bad_images TAG IMAGE WHERE: a copy truncated in the middle of its payload, and one with 16 bytes
# of the payload overwritten at WHERE ("middle", or a byte offset into the payload).
bad_images() {
    local tag=$1 image=$2 where=$3 offset length
    read -r offset length < <(payload_range "$image")
    [[ $where == middle ]] && where=$((length / 2))
    head -c $((offset + length / 2)) "$image" > "$work/$tag-truncated.img"
    cp "$image" "$work/$tag-corrupt.img"
    printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' |
        dd of="$work/$tag-corrupt.img" bs=1 seek=$((offset + where)) conv=notrunc status=none
    for kind in truncated corrupt; do
        local file=$work/$tag-$kind.img regex="file truncated: [0-9]+ of [0-9]+ bytes"
        [[ $kind == corrupt ]] && regex="corrupt|checksum|mismatch|truncated|not an ELF"
        expect_failure "$tag-$kind (pack)" "$regex" "$file" "$out" -- --lz4 "$file" -o "$out"
        expect_failure "$tag-$kind (extract)" "$regex" "$file" "$out" -- extract "$file" -o "$out"
    done
}
bad_images kpack "$work/good.img" middle

# --- Crafted headers and kpack records: info, extract and repacking all refuse them with one line.
# patch_image TAG FIELD VALUE: a copy of good.img with one field set ("pref_address" in the setup
# header, or a PackerRecord field of the kpack record, which sits right before kernel_info).
patch_image() {
    python3 - "$work/good.img" "$work/$1.img" "$2" "$3" <<'PY'
import struct, sys
src, dst, field, value = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0)
d = bytearray(open(src, "rb").read())
setup = ((d[0x1F1] or 4) + 1) * 512
record = setup + struct.unpack_from("<I", d, 0x268)[0] - 88  # sizeof(PackerRecord), formats/kpack_image.h
at = {"pref_address": (0x258, "<Q"), "magic": (record, "<Q"), "image_size": (record + 32, "<Q"),
      "kernel_alignment": (record + 48, "<Q"), "codec": (record + 12, "<I")}[field]
struct.pack_into(at[1], d, at[0], value)
open(dst, "wb").write(d)
PY
}
crafted() {  # crafted TAG REGEX FIELD VALUE
    local tag=$1 regex=$2 file=$work/$1.img
    patch_image "$tag" "$3" "$4"
    expect_failure "$tag (info)" "$regex" "$file" "$out" -- info "$file"
    expect_failure "$tag (extract)" "$regex" "$file" "$out" -- extract "$file" -o "$out"
    expect_failure "$tag (repack)" "$regex" "$file" "$out" -- --lz4 "$file" -o "$out"
}
crafted pref-address-near-2-pow-64 "pref_address" pref_address 0xFFFFFFFFFFE00000
crafted record-kernel-alignment-0 "kernel alignment" kernel_alignment 0
crafted record-image-size-too-small "image size does not cover the stub" image_size 0x40
crafted record-unknown-codec "unknown payload codec" codec 9

# --- kpack --elf output, truncated or altered: info, extract and repacking refuse it with one line.
"$kpack" --elf --zstd --level 1 "$cases/good.elf" -o "$work/good.kpack.elf" 2>/dev/null ||
    { echo "FAIL: cannot pack good.elf with --elf"; exit 1; }
bad_elf() {  # bad_elf TAG REGEX PYTHON-EXPRESSION-ON-d (a bytearray of the good ELF)
    local tag=$1 regex=$2 file=$work/$1.kpack.elf
    python3 -c 'import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
exec(sys.argv[3])
open(sys.argv[2], "wb").write(d)' "$work/good.kpack.elf" "$file" "$3"
    expect_failure "$tag (info)" "$regex" "$file" "$out" -- info "$file"
    expect_failure "$tag (extract)" "$regex" "$file" "$out" -- extract "$file" -o "$out"
    expect_failure "$tag (repack)" "$regex" "$file" "$out" -- --lz4 "$file" -o "$out"
}
# Offsets in formats/kpack_elf.h: e_entry 24, the PT_LOAD's p_align 112, Xen's note's descriptor 192.
bad_elf elf-truncated "truncated" "del d[len(d) // 2:]"
bad_elf elf-entry-moved "e_entry" "struct.pack_into('<Q', d, 24, struct.unpack_from('<Q', d, 24)[0] + 16)"
bad_elf elf-pvh-entry-moved "PVH" "struct.pack_into('<Q', d, 192, struct.unpack_from('<Q', d, 192)[0] + 16)"
bad_elf elf-align-4k "p_align" "struct.pack_into('<Q', d, 112, 0x1000)"
bad_elf elf-frame-corrupt "mismatch|corrupt" "d[len(d) - 64:len(d) - 48] = b'\\xde\\xad\\xbe\\xef' * 4"
if [[ -n $stock && -s $stock ]]; then
    # Debian's payload is legacy LZ4, which has no checksum: bytes changed inside a block can
    # decode to a different kernel without any error (the kernel's own decompressor would not
    # notice either). So the stock copy is corrupted in its first block's size field instead.
    bad_images stock "$stock" 4
elif [[ -n $stock ]]; then
    skip "stock images" "cannot read the stock bzImage $stock"
else
    echo "stock images: not asked for (no second argument); bad_input.cli.stock runs them"
fi

echo "bad_input: $passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
