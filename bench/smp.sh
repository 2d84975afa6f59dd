#!/usr/bin/env bash
# smp.sh OUT ROUNDS TAG... — the parallel decode in the guest: each kpack image (lz4, zstd; set
# KPACK_SMP_CODECS to change) of each kernel TAG booted on a 2-CPU machine under multi-threaded
# TCG (no -icount: the vCPUs run on host threads), ROUNDS times with every CPU decoding and ROUNDS
# times with kpack.cpus=1, interleaved. Both runs have the same machine (-smp 2): comparing -smp 2
# with -smp 1 would measure QEMU too. Reads the stub's "segments" phase (TSC cycles of the decode)
# from kpack.debug and prints, per image, the medians and their ratio (all CPUs / one CPU).
#
# Guest RAM is preallocated (-mem-prealloc): otherwise each guest page the decode first writes costs
# the host a page fault, and on this machine (itself a VM) those faults made one boot's decode
# phase take from 187 M to 448 M cycles with the same image (SeaBIOS, one CPU); preallocated,
# 170 M to 234 M. Those faults also split over the two vCPU threads, which flattered the ratio (OVMF
# lz4, 5 rounds: 0.65 with them, 0.74 without). The stub's own work is what this measures.
#
# KPACK_SMP_FIRMWARE=ovmf boots the same through OVMF's -kernel path (the PE entry, which decodes
# after ExitBootServices and starts the APs itself) and writes OUT/smp-ovmf.tsv instead.
#
# KPACK_SMP_MACHINE=microvm boots on `-M microvm,acpi=on` (QEMU's -kernel on an ELF: kpack's PVH
# entry; `tsc_early_khz=2300000`, as that kernel cannot calibrate the TSC under TCG otherwise); its
# power-off does not end QEMU, so QEMU is stopped once the /init marker is in the log. pc names the
# default machine. KPACK_SMP_NAME names the TSV and the logs' series (bench/microvm.sh: smp-elf-pc).
#
# Expects OUT/TAG/IMAGE.img and OUT/initramfs.cpio.gz (bench/run.sh makes them). Writes
# OUT/smp.tsv: TAG IMAGE MODE ROUND CYCLES HELPER_FRAMES STUB_CYCLES, the last the stub's whole run
# up to the kernel's relocation (kpack.debug's "total cycles"): waking the helpers costs the boot
# CPU too, before the decode, and this column keeps that in sight.
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: $0 OUT ROUNDS TAG..." >&2; exit 2; }
out=$1 rounds=$2
shift 2
lock=/tmp/kpack-qemu.lock
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/qemu.sh"
firmware=() tsv=$out/smp.tsv
if [[ ${KPACK_SMP_FIRMWARE:-seabios} == ovmf ]]; then
    ovmf=${OVMF:-/usr/share/qemu/OVMF.fd}
    [[ -f $ovmf ]] || { echo "smp.sh: no OVMF at $ovmf (package ovmf)" >&2; exit 77; }
    firmware=(-bios "$ovmf") tsv=$out/smp-ovmf.tsv
fi
series=smp${firmware:+-ovmf} machine=() machine_words=
if [[ ${KPACK_SMP_MACHINE:-pc} == microvm ]]; then
    machine=(-M microvm,acpi=on) machine_words=tsc_early_khz=2300000
fi
if [[ -n ${KPACK_SMP_NAME:-} ]]; then series=$KPACK_SMP_NAME tsv=$out/$KPACK_SMP_NAME.tsv; fi

# run LOG QEMU-OPTIONS...: one boot on the tests' machine, one QEMU at a time; QEMU is stopped once
# the marker, a panic or a halt is in the log (microvm's power-off does not end it).
run() {
    local log=$1
    shift
    : > "$log"
    qemu_machine "file:$log"
    exec 9>"$lock"
    flock 9
    qemu_run_until "$log" 'KPACK_INIT_OK|Kernel panic|kpack: halted' 120 "${qemu_cmd[@]}" "$@" 2>/dev/null 9>&-
    exec 9>&-
}

# kernel_fault LOG: why a boot that did not reach /init may be booted again, here only. What this
# part measures, the stub's decode, was over and printed when the kernel started, so a fault of the
# kernel's after that gets another boot (two at most, boot() below): a known fault of multi-threaded TCG (mttcg_fault,
# tests/lib/qemu.sh, as tests/boot/boot.sh retries), or any other once the kernel had printed its
# banner after the stub's summary (6.18 lz4 under OVMF, one boot in some 150: a double fault at a
# patched 5-byte NOP in __kmalloc_node_noprof; stock 6.18 there: "Oops: int3", 2 boots in 90).
# The tests retry only the first kind. Every retry goes into OUT/retried.txt with its reason, and
# BENCHMARKS.md lists them (bench/report.py, retried_note).
kernel_fault() {
    local fault
    if fault=$(mttcg_fault "$1" "$qemu_status"); then
        echo "$fault (multi-threaded TCG)"
    elif grep -aq 'Linux version' <<< "$(sed -n '/ total cycles=/,$p' "$1")"; then
        fault=$(grep -a -m1 -E 'double fault|Oops|BUG|Kernel panic|general protection' "$1" | tr -d '\r' | cut -c1-120)
        echo "the kernel failed after the stub's work: ${fault:-no /init within the time limit}"
    else
        return 1
    fi
}

boot() {  # TAG IMAGE WORDS -> prints "CYCLES HELPER_FRAMES STUB_CYCLES"
    local log=$out/$1/$2.$series.log attempt fault
    # Three boots at most: the same MTTCG fault twice in a row is rare but seen (6.18 lz4,
    # kpack.cpus=1: "Oops: int3" on both boots at 5268352).
    for attempt in 1 2 3; do
        run "$log" "${firmware[@]}" "${machine[@]}" -mem-prealloc -smp 2 \
            -kernel "$out/$1/$2.img" -initrd "$out/initramfs.cpio.gz" \
            -append "console=ttyS0 panic=-1 kpack.debug $machine_words $3"
        grep -a -q KPACK_INIT_OK "$log" && break
        ((attempt < 3)) && fault=$(kernel_fault "$log") || break
        cp "$log" "$log.failed$attempt"
        printf '%s\t%s\t%s\t%s\t%s\n' "$series" "$1" "$2" "${3:--}" "$fault" >> "$out/retried.txt"
        echo "smp.sh: $1/$2 ($3): $fault; booting again" >&2
    done
    grep -a -q KPACK_INIT_OK "$log" || { echo "smp.sh: $1/$2 ($3) did not reach /init; see $log" >&2; return 1; }
    local cycles helpers stub
    cycles=$(grep -a -o 'kpack: segments bytes=[0-9]* cycles=[0-9]*' "$log" | head -n1 | sed 's/.*cycles=//')
    helpers=$(grep -a -o 'frames: [0-9]*, [0-9]* by helpers' "$log" | head -n1 | sed 's/.*, \([0-9]*\) by.*/\1/')
    stub=$(grep -a -o ' total cycles=[0-9]*' "$log" | head -n1 | sed 's/.*cycles=//')
    echo "$cycles ${helpers:-0} $stub"
}

: > "$tsv"
# This series' retries of an earlier run are not this run's.
if [[ -f $out/retried.txt ]]; then
    grep -v -P "^\Q$series\E\t" "$out/retried.txt" > "$out/retried.txt.new" || true
    mv "$out/retried.txt.new" "$out/retried.txt"
fi
for tag in "$@"; do
    for image in ${KPACK_SMP_CODECS:-lz4 zstd}; do
        for ((round = 0; round < rounds; round++)); do
            for mode in all one; do
                words=; [[ $mode == one ]] && words=kpack.cpus=1
                read -r cycles helpers stub < <(boot "$tag" "$image" "$words")
                printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\n' "$tag" "$image" "$mode" "$round" "$cycles" "$helpers" "$stub" \
                    >> "$tsv"
            done
        done
        python3 - "$tsv" "$tag" "$image" <<'EOF'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines()]
rows = [r for r in rows if r[0] == sys.argv[2] and r[1] == sys.argv[3]]
med = {m: statistics.median(int(r[4]) for r in rows if r[2] == m) for m in ('all', 'one')}
stub = {m: statistics.median(int(r[6]) for r in rows if r[2] == m) for m in ('all', 'one')}
helpers = statistics.median(int(r[5]) for r in rows if r[2] == 'all')
print(f"{sys.argv[2]} {sys.argv[3]}: decode cycles, median of {len(rows) // 2}: all CPUs {med['all'] / 1e6:.1f} M, "
      f"kpack.cpus=1 {med['one'] / 1e6:.1f} M, ratio {med['all'] / med['one']:.2f} (helpers decoded {helpers:g} frames); "
      f"whole stub {stub['all'] / 1e6:.1f} M / {stub['one'] / 1e6:.1f} M, ratio {stub['all'] / stub['one']:.2f}")
EOF
    done
done
