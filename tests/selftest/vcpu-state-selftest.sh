#!/usr/bin/env bash
# vcpu-state-selftest.sh — tests/lib/vcpu-state.py, the hang post-mortem of tests/boot/boot.sh,
# against a real QEMU held at reset (two vCPUs at RIP 0xfff0, the AP halted), against register dumps whose
# answer is known (a kernel RIP given its link address from kpack.debug's virtual base, one vCPU
# spinning over two RIPs), and against a QEMU that is gone.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script=$here/../lib/vcpu-state.py
work=$(mktemp -d /tmp/kpack-vcpu-state.XXXXXX)
qemu_pid=
cleanup() {
    [[ -z $qemu_pid ]] || kill "$qemu_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "vcpu-state-selftest: FAIL: $*" >&2; exit 1; }

# A live QEMU, stopped before its first instruction (-S): every vCPU at the reset vector.
qemu-system-x86_64 -S -smp 2 -accel tcg -display none -nodefaults -m 16M \
    -qmp "unix:$work/qmp,server=on,wait=off" 2>"$work/qemu.stderr" &
qemu_pid=$!
echo "kpack: lz4 image at 0x100000" > "$work/serial.log"
out=$(QEMU_PID=$qemu_pid python3 "$script" "$work/qmp" "$work/serial.log") || fail "no answer from a live QEMU: $out"
want="vcpu-state: vCPU 0: HLT=0 RIP 0xfff0
vcpu-state: vCPU 1: HLT=1 RIP 0xfff0"  # an AP waits for its start-up IPI halted
[[ $out == "$want" ]] || fail "a QEMU at reset gave
$out
instead of
$want"

# Known dumps: vCPU 0 halted in the kernel 1 MiB past its link address's start, vCPU 1 spinning.
out=$(python3 - "$script" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("vcpu_state", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
slide = m.kernel_slide("kpack: ... virtual base 0xffffffff9c200000 (offset 0x1b200000 ...)")
dump = "CPU#0\nRIP=ffffffff9c300000 RFL=00000246\nHLT=1\nCPU#1\nRIP=ffffffff9c300{} RFL=00000002\nHLT=0\n"
for line in m.summarize([dump.format("010"), dump.format("020"), dump.format("010")], slide):
    print(line)
print(m.summarize([dump.format("010")], m.kernel_slide("no kpack.debug line"))[1])
PY
)
want="vcpu-state: vCPU 0: HLT=1 RIP 0xffffffff9c300000 (linked 0xffffffff81100000)
vcpu-state: vCPU 1: HLT=0 RIP 0xffffffff9c300010 (linked 0xffffffff81100010), 0xffffffff9c300020 (linked 0xffffffff81100020)
vcpu-state: vCPU 1: HLT=0 RIP 0xffffffff9c300010"
[[ $out == "$want" ]] || fail "known dumps gave
$out
instead of
$want"

# QEMU gone: one line saying so, and status 1.
kill "$qemu_pid"
wait "$qemu_pid" 2>/dev/null || true
status=0
out=$(QEMU_PID=$qemu_pid python3 "$script" "$work/qmp" "$work/serial.log") || status=$?
[[ $status == 1 && $out == "vcpu-state: QEMU did not answer on $work/qmp"* ]] || fail "a gone QEMU gave status $status: $out"
qemu_pid=
echo "vcpu-state-selftest: PASS"
