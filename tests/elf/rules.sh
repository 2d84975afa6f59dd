#!/usr/bin/env bash
# rules.sh KPACK_BINARY CHECK_VMM_ELF CODEC BUILD_DIR — the ELF check: `kpack --elf --CODEC` of the
# real Debian kernel (the image the boot.elf.* tests boot, fixture.sh's packed_image) must pass
# check_vmm_elf, the rules of rust-vmm's ELF loader (Firecracker, Cloud Hypervisor) and QEMU's
# (tests/support/vmm_elf_rules.h): those VMMs need KVM, which CI lacks. kpack info must read it
# back, and say where it is loaded and why; kpack extract must read it back to a vmlinux that loads
# the same bytes as the stock image's own (same_memory.py) and the stock image's relocation table.
# Exit 0 pass, 1 fail.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK_BINARY CHECK_VMM_ELF CODEC BUILD_DIR" >&2; exit 2; }
kpack=$1 check=$2 codec=$3 boot_dir=$4/boot
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../boot/fixture.sh"
boot_fixture "$boot_dir"

image=$(packed_image "$kpack" "elf-$codec" "$vmlinuz" "$boot_dir/loaders")
"$check" "$image"
info=$("$kpack" info "$image")
echo "$info" | sed -n '1,/^load:/p'
# Compressed images of this kernel fit below its 16 MiB floor, so they need no more guest RAM than
# the stock bzImage; the raw one is loaded so that its kernel runs in place.
want="below the kernel's floor"
[[ $codec != raw ]] || want="raw, its first segment loaded where it runs"
grep -q "^load: .*$want" <<<"$info" || { echo "rules: FAIL: $image is not loaded as expected ($want)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$kpack" extract "$vmlinuz" -o "$work/stock.vmlinux" --relocs "$work/stock.relocs"
"$kpack" extract "$image" -o "$work/elf.vmlinux" --relocs "$work/elf.relocs"
"$here/same_memory.py" "$work/elf.vmlinux" "$work/stock.vmlinux" ||
    { echo "rules: FAIL: kpack extract $image does not give back the stock image's kernel" >&2; exit 1; }
cmp "$work/elf.relocs" "$work/stock.relocs" ||
    { echo "rules: FAIL: kpack extract $image does not give back the stock image's relocations" >&2; exit 1; }
echo "rules: PASS: $image"
