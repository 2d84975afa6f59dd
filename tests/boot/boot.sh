#!/usr/bin/env bash
# boot.sh [--timeout S] [--log FILE] [--expect-fail REGEX] [--stop-on-marker] [--no-kernel]
#         IMAGE INITRAMFS [extra qemu args...]
#
# Boot IMAGE (a bzImage, or an ELF vmlinux with a PVH note) under QEMU/TCG with the test initramfs
# and check that its /init printed KPACK_INIT_OK on the serial port.
#
#   default         pass iff the serial log contains KPACK_INIT_OK (init then powers off).
#   --expect-fail   pass iff the marker is absent, the log matches REGEX, and QEMU was still running
#                   when the timeout hit (exit 124). A triple fault or reset ends QEMU at once under
#                   -no-reboot, so "still running" means the guest stopped in a controlled way
#                   (e.g. a stub that prints an error and halts).
#   --stop-on-marker  end QEMU as soon as the marker is in the log, for machines where the guest's
#                   power-off does not end QEMU (microvm without ACPI); a pass as above.
#   --no-kernel     do not pass -kernel/-initrd/-append: a loader on a medium given in the extra
#                   QEMU args (an ISO, a disk) boots IMAGE and INITRAMFS with its own command line.
#                   IMAGE and INITRAMFS are then only checked for existence and reported.
#
# Environment: KPACK_APPEND is added to the kernel command line; QEMU overrides the binary;
# KPACK_EXPECT_RUN_REPORT=1 also requires the stub's run report among the setup_data nodes the
# kernel kept (init's "KPACK_SETUP_DATA types=" line names type 0x6b70616b). A pass also needs each
# of the stub's kpack.debug entry lines to say it checked its record and relocated itself once.
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (no QEMU).
set -euo pipefail

usage() { echo "usage: $0 [--timeout S] [--log FILE] [--expect-fail REGEX] [--stop-on-marker] [--no-kernel] IMAGE INITRAMFS [qemu args...]" >&2; exit 2; }

timeout_s=
log=
expect_fail=
stop_on_marker=
direct_kernel=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --timeout) [[ $# -ge 2 ]] || usage; timeout_s=$2; shift 2 ;;
        --log) [[ $# -ge 2 ]] || usage; log=$2; shift 2 ;;
        --expect-fail) [[ $# -ge 2 ]] || usage; expect_fail=$2; shift 2 ;;
        --stop-on-marker) stop_on_marker=1; shift ;;
        --no-kernel) direct_kernel=; shift ;;
        --) shift; break ;;
        -*) usage ;;
        *) break ;;
    esac
done
[[ $# -ge 2 ]] || usage
image=$1 initrd=$2
shift 2
for f in "$image" "$initrd"; do
    [[ -r $f ]] || { echo "boot.sh: cannot read $f" >&2; exit 1; }
done

# A failing boot halts rather than exits, so the expected-failure case needs a short leash; a good
# 6.1 cloud kernel reaches /init in ~3-10 s under TCG, leaving ample room in 120 s.
if [[ -z $timeout_s ]]; then
    if [[ -n $expect_fail ]]; then timeout_s=20; else timeout_s=120; fi
fi

source "$(dirname "${BASH_SOURCE[0]}")/../lib/qemu.sh"
qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || { echo "boot.sh: $qemu not found; skipping" >&2; exit 77; }

if [[ -z $log ]]; then
    log=$(mktemp -t kpack-boot.XXXXXX.log)
fi
mkdir -p "$(dirname "$log")"
qemu_err=$log.qemu-stderr

# Serial to a file rather than stdio: no tty games, and the log survives for post-mortems.
qemu_machine "file:$log"
cmd=("${qemu_cmd[@]}")
if [[ -n $direct_kernel ]]; then
    cmd+=(-kernel "$image" -initrd "$initrd" -append "console=ttyS0 panic=-1 ${KPACK_APPEND:-}")
fi
cmd+=("$@")

has_marker() { grep -aq 'KPACK_INIT_OK' "$log"; }

# A QMP socket, so that a boot still running 3 s before its timeout leaves where each vCPU was
# (tests/lib/vcpu-state.py) in LOG.vcpus: the post-mortem of a hang the serial log cannot give.
# In /tmp: a socket's path must fit in 108 bytes.
qmp_socket=$(mktemp -u /tmp/kpack-qmp.XXXXXX)
trap 'rm -f "$qmp_socket"' EXIT
cmd+=(-qmp "unix:$qmp_socket,server=on,wait=off")

record_vcpus_before_timeout() {
    sleep "$((timeout_s > 6 ? timeout_s - 3 : timeout_s / 2))"
    python3 "$(dirname "${BASH_SOURCE[0]}")/../lib/vcpu-state.py" "$qmp_socket" "$log" > "$log.vcpus" 2>&1
}

run_qemu() {
    : > "$log"
    rm -f "$log.vcpus"
    start=$EPOCHREALTIME
    status=0
    # Its own output to /dev/null: a sleep left behind must not hold ctest's pipe open.
    record_vcpus_before_timeout > /dev/null 2>&1 &
    local recorder=$!
    if [[ -z $stop_on_marker ]]; then
        timeout -k 5 "$timeout_s" "${cmd[@]}" 2> "$qemu_err" || status=$?
    else
        # Ended once the marker shows, with status 0, as if the guest had powered off.
        qemu_run_until "$log" KPACK_INIT_OK "$timeout_s" "${cmd[@]}" 2> "$qemu_err"
        status=$qemu_status
    fi
    pkill -P "$recorder" 2>/dev/null || true
    kill "$recorder" 2>/dev/null || true
    wait "$recorder" 2>/dev/null || true
    elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

# One boot, and a second only for a known fault of QEMU's multi-threaded TCG, never of the image
# (mttcg_fault, tests/lib/qemu.sh): the kernel ran its own code by then, the stub's work is over;
# a second boot must then reach /init, and the first log is kept beside the second.
cpus=1
for ((i = 1; i <= $#; i++)); do
    [[ ${!i} != -smp ]] || { j=$((i + 1)); cpus=${!j%%,*}; }
done
run_qemu
if [[ -z $expect_fail && $cpus != 1 ]] && ! has_marker && fault=$(mttcg_fault "$log" "$status"); then
    cp "$log" "$log.first"
    echo "boot.sh: RETRY: $fault on $cpus vCPUs, a fault of multi-threaded TCG (first log:" \
         "$log.first); booting once more" >&2
    [[ ! -s $log.vcpus ]] || cat "$log.vcpus" >&2
    run_qemu
fi

fail() {
    echo "boot.sh: FAIL: $*" >&2
    echo "boot.sh: qemu exit status $status after ${elapsed}s (124 = timeout ${timeout_s}s)" >&2
    echo "boot.sh: command: $(printf '%q ' "${cmd[@]}")" >&2
    if [[ -s $qemu_err ]]; then
        echo "---- qemu stderr ($qemu_err) ----" >&2
        tail -n 20 "$qemu_err" >&2
    fi
    if [[ -s $log.vcpus ]]; then
        echo "---- the vCPUs 3 s before the timeout ($log.vcpus) ----" >&2
        cat "$log.vcpus" >&2
    fi
    echo "---- last 40 lines of serial log $log ----" >&2
    tail -n 40 "$log" >&2
    echo "---- end of serial log $log ----" >&2
    exit 1
}

# -a: the log can contain NULs and escape sequences from early firmware output.
marker=$(grep -a -m1 -o 'KPACK_INIT_OK[^[:cntrl:]]*' "$log" || true)

if [[ -z $expect_fail ]]; then
    [[ -n $marker ]] || fail "no KPACK_INIT_OK in the serial log"
    if [[ -n ${KPACK_EXPECT_RUN_REPORT:-} ]] && ! grep -aqE 'KPACK_SETUP_DATA types=(.*,)?0x6b70616b' "$log"; then
        fail "the kernel has no kpack run report in setup_data: $(grep -ao -m1 'KPACK_SETUP_DATA types=[^[:cntrl:]]*' "$log")"
    fi
    # Every entry checks the packer's record and relocates the stub once (kpack.debug's entry line,
    # one per kpack boot in the log).
    entries=$(grep -aoE 'kpack: entered by [^;]*; record checks [0-9]+, relocation passes [0-9]+' "$log" || true)
    twice=$(grep -vE 'record checks 1, relocation passes 1$' <<<"$entries" || true)
    [[ -z $twice ]] || fail "the stub did not check its record and relocate itself exactly once: $twice"
    echo "boot.sh: PASS: $marker (${elapsed}s wall, qemu exit $status) $image"
else
    [[ -z $marker ]] || fail "expected failure, but the guest reached /init: $marker"
    [[ $status -eq 124 ]] || fail "expected the guest to hang until the timeout; QEMU ended with status $status (reset, triple fault or QEMU error)"
    grep -aEq -- "$expect_fail" "$log" || fail "serial log does not match /$expect_fail/"
    echo "boot.sh: PASS (expected failure matched /$expect_fail/, ${elapsed}s wall) $image"
fi
