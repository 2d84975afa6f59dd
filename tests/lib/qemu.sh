# shellcheck shell=bash
# qemu.sh — sourced by every test and bench script that starts QEMU, so that the test machine is
# said once: what it has, what it leaves out, and why.

# qemu_machine SERIAL [--memory SIZE] [--reboot]
#   Sets the array qemu_cmd to QEMU ($QEMU, else qemu-system-x86_64) as the test machine, its first
#   serial port at SERIAL (file:LOG, or stdio); callers append their own options.
#   - 512M unless --memory says otherwise: room for Debian's kernel and the test initramfs, and the
#     top of RAM (where the stub's work area goes) below 4 GiB.
#   - The serial port only: tests read nothing else, and nothing waits on a terminal.
#   - -nic none: no option ROM to load and nothing to probe; no test needs a network.
#   - -no-reboot unless --reboot: a guest reset (triple fault, panic=-1) ends QEMU at once instead of
#     a loop; --reboot for the tests that watch a machine start again.
#   - No -accel: TCG is what this machine has (its guests hang under KVM), and -icount needs it.
qemu_machine() {
    local serial=$1 memory=512M reboot=-no-reboot
    shift
    while [[ $# -gt 0 ]]; do
        case $1 in
            --memory) memory=$2; shift 2 ;;
            --reboot) reboot=; shift ;;
            *) echo "qemu_machine: unknown option $1" >&2; return 2 ;;
        esac
    done
    qemu_cmd=("${QEMU:-qemu-system-x86_64}" -m "$memory" -display none -monitor none -serial "$serial" -nic none
              ${reboot:+"$reboot"})
}

# Guest time that repeats, for benchmarks: the TSC counts instructions, the RTC starts on a fixed date.
qemu_icount=(-icount shift=0,sleep=off -rtc clock=vm,base=2026-01-01T00:00:00)

# qemu_run_until LOG REGEX TIMEOUT COMMAND...
#   Runs COMMAND (a QEMU whose serial port writes LOG) in the background and ends it once LOG
#   matches REGEX, for guests that do not end QEMU themselves: microvm, whose power-off does not,
#   a stub that halts, a firmware that sits at a prompt. It also ends when QEMU exits or after
#   TIMEOUT seconds. Sets qemu_status: 0 when ended on REGEX, else QEMU's (124: the timeout).
qemu_run_until() {
    local log=$1 regex=$2 limit=$3 pid matched=
    shift 3
    timeout -k 5 "$limit" "$@" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if grep -aqE "$regex" "$log" 2>/dev/null; then
            sleep 0.5  # the rest of the matching line
            kill "$pid" 2>/dev/null || true
            matched=1
            break
        fi
        sleep 0.2
    done
    qemu_status=0
    wait "$pid" || qemu_status=$?
    [[ -z $matched ]] || qemu_status=0
}

# mttcg_fault LOG STATUS
#   For a boot of more than one vCPU that did not reach /init (STATUS: QEMU's, 124 the timeout):
#   prints which known fault of QEMU's multi-threaded TCG LOG shows, never one of the image, since
#   the kernel has been running its own code for a second by then; returns 1 for anything else.
#   - "Oops: int3": a vCPU ran a stale translation of kernel text another vCPU patched through the
#     kernel's int3 protocol, after the patch completed (CI saw it once in 7.3.4's
#     sched_clock_cpu, in about 300 two-CPU boots; 45 reruns of that cell, stock and kpack, side by
#     side, all reached /init).
#   - A stall once the kernel runs on every vCPU: "smp: Brought up" N > 1 CPUs, "hpet0:" printed
#     (the kernel is past probing its clocksources), then nothing reaches /init until the timeout.
#     Seen in the switch of clocksource (hpet0 the last line: 7.3.4 with kpack.cpus=1, the stub
#     touched no other CPU; sid's 7.2.13 under a parallel build), after it (6.1 through qboot on 4
#     vCPUs, CI, "pnp: PnP ACPI: found 6 devices" the last line), and in stock's own boots: 6.1's
#     stock image through qboot on 4 vCPUs, two or three boots side by side, hung in 1 of 100
#     (kpack's image: 140 of 140 reached /init), one vCPU looping in asm_exc_int3 while
#     timer_update_keys waited on it in smp_call_function_many_cond (RCU stall, soft lockup).
#     boot.sh prints where each vCPU was 3 s before the timeout.
mttcg_fault() {
    local log=$1 status=$2
    if grep -aq 'Oops: int3' "$log"; then
        echo "the kernel's 'Oops: int3' (a vCPU ran kernel text another vCPU patched)"
    elif [[ $status -eq 124 ]] && grep -aqE 'smp: Brought up [0-9]+ nodes?, ([2-9]|[1-9][0-9]+) CPUs' "$log" &&
        grep -aq '\] hpet0: ' "$log"; then
        echo "the kernel stalled on its vCPUs after probing its clocksources (last line: $(tail -n 1 "$log" | tr -d '\r' | cut -c1-100))"
    else
        return 1
    fi
}
