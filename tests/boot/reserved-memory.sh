#!/usr/bin/env bash
# reserved-memory.sh KPACK_BINARY BUILD_DIR IMAGE — memory the command line keeps from the kernel
# survives the boot, as a ramoops region's crash log of the last boot must.
#
# QEMU's loader device puts 1 MiB of known bytes at 0x1fe00000, near the top of the 512 MiB guest's
# RAM, where the stub's work area goes when nothing keeps it away; memmap=1M$0x1fe00000 reserves
# it, as for ramoops. /init reads it back through /dev/mem (kpack.memsum, tests/boot/init.c), and
# its FNV-1a must be the file's. IMAGE is stock (the control, which writes only inside init_size)
# or a codec (a compressed image's work area is 1-2 MiB there, a raw one's its relocation table).
# KPACK_KERNEL_TAG picks another kernel than 6.1 (tests/kernels/kernels.txt), as the kernels suite does.
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK_BINARY BUILD_DIR IMAGE" >&2; exit 2; }
kpack=$1 dir=$2/boot kind=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir" "$(kernel_tag)"
fail() { echo "reserved-memory: FAIL ($kind): $*" >&2; exit 1; }

work=$(loader_dir "$dir")/reserved-memory
mkdir -p "$work"
image=$vmlinuz
[[ $kind == stock ]] || image=$(packed_image "$kpack" "$kind" "$vmlinuz" "$work")
address=0x1fe00000 size=0x100000
# Bytes no run of zeros or of one value could pass for, and their FNV-1a.
read -r want < <(python3 - "$work/pattern-$kind.bin" "$size" <<'PY'
import random, sys
data = random.Random(20261203).randbytes(int(sys.argv[2], 16))
open(sys.argv[1], "wb").write(data)
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
print(f"{h:016x}")
PY
)
log=$work/reserved-memory-$kind.serial.log
KPACK_APPEND="memmap=1M\$$address kpack.memsum=$address,$size kpack.debug" \
    "$here/boot.sh" --log "$log" "$image" "$initrd" -m 512M \
    -device "loader,file=$work/pattern-$kind.bin,addr=$address,force-raw=on"
line=$(grep -a -m1 -o "KPACK_MEMSUM $address,$size fnv=[0-9a-z]*" "$log") || fail "no KPACK_MEMSUM line; see $log"
[[ ${line##*fnv=} == "$want" ]] || fail "the reserved region changed: $line, the bytes loaded there give $want; see $log"
echo "reserved-memory: PASS: $kind left memmap=1M\$$address as it was ($want)"
