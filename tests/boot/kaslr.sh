#!/usr/bin/env bash
# kaslr.sh KPACK BUILD_DIR TAG CODEC [BOOTS] — KASLR parity on a real kernel: the kernel TAG (6.1,
# 6.12) packed with CODEC (raw, lz4, zstd; stock: Debian's image itself, the control; elf-CODEC:
# `kpack --elf --CODEC`, booted by PVH through QEMU -kernel) from its stock bzImage (relocation
# table included) and booted BOOTS times (default 8; 10 for an ELF) under SeaBIOS. /init prints the kernel's virtual _text and its
# physical "Kernel code" (tests/boot/init.c). Required, as the stock image gives them:
#   - at least 6 distinct virtual bases in 8 boots; for compressed codecs at least 6 distinct
#     physical bases too (raw goes to the lowest fit on the floor every boot unless packed with
#     --randomize-physical);
#   - every virtual base 2 MiB-aligned in [__START_KERNEL_map + 16 MiB, + 1 GiB), every physical
#     one 2 MiB-aligned at or above 16 MiB;
#   - a forced panic prints "Kernel Offset: 0x…" matching _text: the kernel saw KASLR_FLAG;
#   - with nokaslr: the same addresses on every boot (the link-time virtual base, the lowest
#     physical fit at or above 16 MiB; an ELF's kernel exactly at its link-time 16 MiB), and
#     "Kernel Offset: disabled".
# An ELF must give at least 8 distinct bases in 10 boots, as direct-boot VMMs' users ask of it.
set -euo pipefail

[[ $# -ge 4 && $# -le 5 ]] || { echo "usage: $0 KPACK BUILD_DIR TAG CODEC [BOOTS]" >&2; exit 2; }
kpack=$1 dir=$2/boot tag=$3 codec=$4
format=(); [[ $codec == elf-* ]] && format=(--elf) codec=${codec#elf-}
boots=${5:-$(( ${#format[@]} ? 10 : 8 ))}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir" "$tag"
out=$dir/kaslr-$tag-${format:+elf-}$codec
mkdir -p "$out"
fail() { echo "kaslr: FAIL ($tag $codec): $*" >&2; exit 1; }

# The level does not matter here; a fast one keeps the test short. "stock" boots Debian's own
# image the same way: the control every kpack codec is held to.
if [[ $codec == stock ]]; then
    cp "$vmlinuz" "$out/image"
else
    level=(); [[ $codec == raw ]] || level=(--level 1)
    "$kpack" "${format[@]}" "--$codec" "${level[@]}" "$vmlinuz" -o "$out/image"
fi

# boot N APPEND: boots once, prints "TEXT CODE" from the KPACK_KASLR line.
boot() {
    local log=$out/boot-$1.log
    KPACK_APPEND=$2 "$here/boot.sh" --log "$log" "$out/image" "$initrd" >/dev/null ||
        fail "boot $1 ($2) did not reach /init; see $log"
    local line
    line=$(grep -a -m1 -o 'KPACK_KASLR text=[0-9a-f]* code=[0-9a-f]*' "$log") || fail "no KPACK_KASLR line in $log"
    line=${line#KPACK_KASLR text=}
    echo "${line% code=*} ${line#* code=}"
}

texts=() codes=()
for ((i = 1; i <= boots; i++)); do
    read -r text code < <(boot "$i" "")
    (( 16#$text % 0x200000 == 0 && 16#$code % 0x200000 == 0 )) || fail "boot $i: unaligned base (text $text, code $code)"
    # Bash arithmetic is signed 64-bit: compare virtual bases as offsets from __START_KERNEL_map.
    offset=$(( 16#$text - 16#ffffffff80000000 ))
    (( offset >= 0x1000000 && offset < 0x40000000 )) || fail "boot $i: _text $text outside the 1 GiB kernel window"
    (( 16#$code >= 0x1000000 )) || fail "boot $i: kernel at $code, below 16 MiB"
    texts+=("$text") codes+=("$code")
    echo "kaslr: boot $i: _text $text, Kernel code $code"
done
distinct() { printf '%s\n' "$@" | sort -u | wc -l; }
need=$(( ${#format[@]} ? boots * 8 / 10 : boots * 6 / 8 ))
(( $(distinct "${texts[@]}") >= need )) || fail "only $(distinct "${texts[@]}") distinct virtual bases in $boots boots"
if [[ $codec == raw ]]; then
    (( $(distinct "${codes[@]}") == 1 )) || fail "a raw image moved without --randomize-physical"
else
    (( $(distinct "${codes[@]}") >= need )) || fail "only $(distinct "${codes[@]}") distinct physical bases in $boots boots"
fi

# The kernel's own view of the flag: its panic message.
read -r text code < <(boot panic "kpack.panic")
grep -aq "Kernel Offset: 0x$(printf '%x' $(( 16#$text - 16#ffffffff81000000 ))) from 0xffffffff81000000" \
    "$out/boot-panic.log" || fail "no matching 'Kernel Offset' in $out/boot-panic.log (_text $text)"

# nokaslr: the link-time virtual base and one physical place (the lowest fit at or above 16 MiB)
# every time, and the kernel says KASLR is off.
fixed=()
for n in 1 2; do
    read -r text code < <(boot "nokaslr-$n" "nokaslr")
    [[ $text == ffffffff81000000 ]] || fail "nokaslr boot $n: _text $text"
    (( 16#$code >= 0x1000000 )) || fail "nokaslr boot $n: kernel at $code, below 16 MiB"
    [[ -z ${format[*]} || $code == 01000000 ]] || fail "nokaslr boot $n: the ELF's kernel at $code, not at its link-time 01000000"
    fixed+=("$code")
done
[[ ${fixed[0]} == "${fixed[1]}" ]] || fail "nokaslr boots put the kernel at ${fixed[0]} and ${fixed[1]}"
boot nokaslr-panic "nokaslr kpack.panic" >/dev/null
grep -aq "Kernel Offset: disabled" "$out/boot-nokaslr-panic.log" || fail "no 'Kernel Offset: disabled' with nokaslr"

echo "kaslr: PASS ($tag ${format:+elf }$codec): $(distinct "${texts[@]}") distinct virtual and $(distinct "${codes[@]}") distinct physical bases in $boots boots; nokaslr fixed at ${fixed[0]}"
