#!/usr/bin/env bash
# boot-retry-selftest.sh — proves that tests/boot/boot.sh boots a second time only for the known
# faults of QEMU's multi-threaded TCG on more than one vCPU (mttcg_fault, tests/lib/qemu.sh: the
# kernel's "Oops: int3", its stall on every vCPU after probing its clocksources), and that the
# second boot must still reach /init: a fake QEMU prints, boot by boot, the lines this script gives
# it ('|' between lines), and times out (status 124) on a boot whose last line is "hpet0: ..." or
# "pnp: ...".
set -euo pipefail

tests=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d -t kpack-boot-retry.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "boot-retry-selftest: FAIL: $*" >&2; exit 1; }

# The fake QEMU writes line N of $work/boots to the -serial file on its Nth start.
cat > "$work/qemu" <<'FAKE'
#!/usr/bin/env bash
for arg; do [[ $arg != file:* ]] || serial=${arg#file:}; done
n=$(($(cat "$FAKE_DIR/count" 2>/dev/null || echo 0) + 1))
echo "$n" > "$FAKE_DIR/count"
sed -n "${n}p" "$FAKE_DIR/boots" | tr '|' '\n' > "$serial"
if grep -qE 'hpet0: |pnp: ' <<< "$(tail -n 1 "$serial")"; then exit 124; fi
FAKE
chmod +x "$work/qemu"
: > "$work/image" && : > "$work/initrd"

run() {  # EXPECTED_STATUS EXPECTED_BOOTS BOOT1_LINE BOOT2_LINE -- QEMU ARGS...
    local want=$1 boots=$2 status=0
    printf '%s\n%s\n' "$3" "$4" > "$work/boots"
    shift 5
    rm -f "$work/count"
    FAKE_DIR=$work QEMU=$work/qemu "$tests/boot/boot.sh" --log "$work/serial.log" "$work/image" "$work/initrd" "$@" \
        > "$work/out.txt" 2>&1 || status=$?
    [[ $status -eq $want ]] || fail "boot.sh exited $status, expected $want ($*): $(cat "$work/out.txt")"
    [[ $(cat "$work/count") -eq $boots ]] || fail "QEMU started $(cat "$work/count") times, expected $boots ($*)"
}
oops='[    1.6] Oops: int3: 0000 [#2] SMP NOPTI'
run 0 2 "$oops" KPACK_INIT_OK -- -smp 2
grep -q 'boot.sh: RETRY' "$work/out.txt" || fail "the second boot was not announced"
[[ -s $work/serial.log.first ]] || fail "the first boot's log was not kept"
run 1 2 "$oops" "$oops" -- -smp 2,sockets=2      # the second boot must reach /init too
run 1 1 "$oops" KPACK_INIT_OK -- -m 1G           # one vCPU: no multi-threaded TCG, no second boot
run 1 1 'Kernel panic - not syncing' KPACK_INIT_OK -- -smp 2   # any other failure: no second boot
run 0 1 KPACK_INIT_OK KPACK_INIT_OK -- -smp 2
up='[    0.51] smp: Brought up 1 node, 2 CPUs' hpet='[    1.00] hpet0: 3 comparators, 64-bit 100.000000 MHz counter'
stall="$up|$hpet"
run 0 2 "$stall" KPACK_INIT_OK -- -smp 2                     # the stall in the clocksource switch
grep -q 'boot.sh: RETRY: the kernel stalled' "$work/out.txt" || fail "the stall's second boot was not announced"
run 1 2 "$stall" "$stall" -- -smp 2                          # ... whose second boot must reach /init
run 1 1 "[    0.51] smp: Brought up 1 node, 1 CPU|$hpet" KPACK_INIT_OK -- -smp 2   # a vCPU missing: no
run 1 1 "$up|$hpet|[    1.01] clocksource: Switched to clocksource tsc-early" KPACK_INIT_OK -- -smp 2
pnp='[    1.20] pnp: PnP ACPI: found 6 devices'
run 0 2 "$up|$hpet|[    1.10] clocksource: Switched to clocksource hpet|$pnp" KPACK_INIT_OK -- -smp 4   # after the switch
run 1 2 "$up|$hpet|$pnp" "$up|$hpet|$pnp" -- -smp 4          # ... whose second boot must reach /init
run 1 1 "$up|$pnp" KPACK_INIT_OK -- -smp 4                   # before the clocksources: no second boot
echo "boot-retry-selftest: PASS"
