#!/usr/bin/env bash
# pvh-parity.sh KPACK BP_DIFF MACHINE CODEC BUILD_DIR — does a kpack ELF hand the kernel what the
# kernel's own PVH boot of its vmlinux gives it? Both boot by PVH through QEMU -kernel on MACHINE
# (pc: its PVH option ROM; microvm: its own firmware, acpi=on) with the same command line, initrd,
# memory and one CPU, with `kpack.bootparams` so /init dumps /sys/kernel/boot_params/data:
#   A: the vmlinux `kpack extract` gives (Debian's has the PVH note): the kernel's own
#      init_pvh_bootparams fills its boot_params;
#   B: `kpack --elf --CODEC` of the stock image: the stub fills them from the same hvm_start_info
#      (stub/entry/pvh_boot_params.cc) and enters the kernel at startup_64.
# boot_params_diff then compares the two pages field by field, allowing only what
# pvh-parity-allow.txt lists (each line with its reason); the whole diff is printed either way.
# Exit: 0 pass, 1 a boot failed or a field outside the allowlist differs, 77 skip (no QEMU).
set -euo pipefail

[[ $# -eq 5 ]] || { echo "usage: $0 KPACK BP_DIFF MACHINE CODEC BUILD_DIR" >&2; exit 2; }
kpack=$1 bpdiff=$2 machine=$3 codec=$4 dir=$5/boot
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir"
out=$dir/pvh-parity-$machine-$codec
mkdir -p "$out"
fail() { echo "pvh-parity: FAIL ($machine $codec): $*" >&2; exit 1; }

"$kpack" extract "$vmlinuz" -o "$out/vmlinux"
"$kpack" --elf "--$codec" "$vmlinuz" -o "$out/kpack.elf"

qemu_args=() boot_args=() words="kpack.bootparams kpack.debug"
if [[ $machine == microvm ]]; then
    # microvm lists its devices in ACPI (acpi=on); its power-off does not end QEMU; its kernel cannot
    # calibrate the TSC against the PIT under TCG often enough (tests/smp/CMakeLists.txt).
    qemu_args=(-M microvm,acpi=on) boot_args=(--stop-on-marker) words+=" tsc_early_khz=2300000"
fi

# boot NAME IMAGE: one boot; its serial log's path on stdout.
boot() {
    local log=$out/$1.serial.log status=0
    KPACK_APPEND=$words "$here/boot.sh" "${boot_args[@]}" --log "$log" "$2" "$initrd" "${qemu_args[@]}" >&2 ||
        status=$?
    [[ $status -ne 77 ]] || exit 77
    [[ $status -eq 0 ]] || fail "the $1 boot did not reach /init (see $log)"
    echo "$log"
}
log_a=$(boot vmlinux "$out/vmlinux")
log_b=$(boot kpack "$out/kpack.elf")
grep -aq "kpack: entered by PVH" "$log_b" || fail "the stub did not say it was entered by PVH (see $log_b)"

source "$here/../lib/parity_verdict.sh"
parity_verdict "$bpdiff" "$log_a" "$log_b" "$here/pvh-parity-allow.txt" "$machine" "kpack --elf --$codec"
