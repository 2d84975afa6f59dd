#!/usr/bin/env bash
# check.sh KPACK KERNEL_DIR_FILE WORKDIR — the relocation table of a real kernel build, every way
# kpack gets one, against the table the kernel's own arch/x86/tools/relocs wrote (vmlinux.relocs).
# KERNEL_DIR_FILE names the directory build-kernel.sh made (vmlinux, vmlinux.relocs, bzImage).
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK KERNEL_DIR_FILE WORKDIR" >&2; exit 2; }
kpack=$1 dir=$(cat "$2") work=$3
vmlinux=$dir/vmlinux want=$dir/vmlinux.relocs
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

# The counts in the kernel's own table, read independently of kpack: lists split at 0 words.
counts=$(od -An -v -tu4 -w4 "$want" | awk '
    $1 == 0 { n++; next } { c[n]++ }
    END { if (n == 3) printf "64-bit %d, inverse-32 %d, 32-bit %d", c[1], c[2], c[3];
          else printf "64-bit %d, 32-bit %d", c[1], c[2] }')
echo "kernel's vmlinux.relocs: $(stat -c %s "$want") bytes: $counts"

# Packs $1 (plus options) into $work/$2.img, then checks its table against vmlinux.relocs.
pack_and_compare() {
    local input=$1 name=$2; shift 2
    "$kpack" --lz4 --level 1 "$@" "$input" -o "$work/$name.img" 2> "$work/$name.err" \
        || fail "$name: packing failed: $(cat "$work/$name.err")"
    [[ ! -s $work/$name.err ]] || fail "$name: packing printed: $(cat "$work/$name.err")"
    "$kpack" extract "$work/$name.img" -o "$work/$name.vmlinux" --relocs "$work/$name.relocs"
    cmp "$want" "$work/$name.relocs" || fail "$name: the table differs from the kernel's vmlinux.relocs"
    "$kpack" info "$work/$name.img" > "$work/$name.info"
    grep -qx "relocations: .*: $counts" "$work/$name.info" \
        || fail "$name: kpack info says '$(grep '^relocations:' "$work/$name.info")', not the counts '$counts'"
    echo "$name: $(stat -c %s "$work/$name.relocs") bytes identical ($(grep '^relocations:' "$work/$name.info"))"
}

# 1. Computed from the vmlinux's .rela sections (the point of this test).
sections=$(readelf -S -W "$vmlinux")  # captured: grep -q in a pipe would SIGPIPE readelf
grep -q ' \.rela\.text ' <<< "$sections" || fail "$vmlinux has no .rela.text: not linked with --emit-relocs"
pack_and_compare "$vmlinux" computed

# 2. The stock bzImage's payload carries the same table after its ELF.
"$kpack" extract "$dir/bzImage" -o "$work/stock.vmlinux" --relocs "$work/stock.relocs"
cmp "$want" "$work/stock.relocs" || fail "the stock bzImage's table differs from vmlinux.relocs"
pack_and_compare "$dir/bzImage" repacked-stock

# 3. A vmlinux without .rela sections: --relocs FILE gives the table; without it, one warning.
objcopy --remove-section='.rela*' "$vmlinux" "$work/stripped.vmlinux"
pack_and_compare "$work/stripped.vmlinux" given --relocs "$want"
"$kpack" --lz4 --level 1 "$work/stripped.vmlinux" -o "$work/none.img" 2> "$work/none.err"
expected="kpack: warning: $work/stripped.vmlinux has no relocation table (no .rela sections, no --relocs): the image can randomize only the physical address"
[[ $(cat "$work/none.err") == "$expected" ]] || fail "no table: stderr was '$(cat "$work/none.err")'"
"$kpack" info "$work/none.img" > "$work/none.info"
grep -qx 'relocations: none (physical randomization only)' "$work/none.info" \
    || fail "no table: kpack info does not say so"
echo "no table: one warning, and kpack info says so"

# 4. A damaged --relocs file is a one-line error naming it.
head -c 4097 "$want" > "$work/bad.relocs"
if "$kpack" "$work/stripped.vmlinux" -o "$work/bad.img" --relocs "$work/bad.relocs" 2> "$work/bad.err"; then
    fail "a 4097-byte --relocs file was accepted"
fi
[[ $(wc -l < "$work/bad.err") -eq 1 ]] && grep -q "^kpack: $work/bad.relocs: " "$work/bad.err" \
    || fail "bad --relocs: stderr was '$(cat "$work/bad.err")'"
[[ ! -e $work/bad.img ]] || fail "bad --relocs: an image was written"
echo "bad --relocs: $(cat "$work/bad.err")"
echo "PASS"
