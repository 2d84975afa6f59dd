#!/usr/bin/env bash
# microvm.sh OUT RUNS KASLR_RUNS SMP_ROUNDS TAG... — kpack's ELF output (`kpack --elf --CODEC`) as the
# direct-boot VMMs take it, against the vmlinux's own PVH boot and the stock bzImage. Per kernel TAG:
#
#   1. -icount shift=0,sleep=off (guest TSC = guest instructions), one CPU, `-M pc` (SeaBIOS; QEMU's
#      -kernel boots an ELF through its PVH option ROM) and `-M microvm,acpi=on` (its own firmware;
#      `tsc_early_khz=2300000` on the command line, since that kernel cannot calibrate the TSC under
#      TCG otherwise; its power-off does not end QEMU, so QEMU is stopped once the /init marker is in
#      the log): the TSC at /init of the vmlinux's PVH boot (the floor), the stock bzImage and the
#      kpack raw/lz4/zstd ELFs, these with KASLR and with `nokaslr`. -icount repeats a boot exactly,
#      so RUNS boots per figure; but KASLR's draw mixes in RDTSC, so the KASLR figures (stock's and
#      kpack's) take KASLR_RUNS boots each. Writes OUT/microvm.tsv: TAG MACHINE IMAGE SETTING RUN TSC
#      and the logs OUT/TAG/IMAGE.mvm-MACHINE-SETTING.RUN.log (kpack.debug on every command line).
#   2. The decode on every CPU: bench/smp.sh with the lz4 ELF on each machine of
#      KPACK_MICROVM_SMP_MACHINES (default "microvm pc"), SMP_ROUNDS interleaved rounds; writes
#      OUT/smp-elf-MACHINE.tsv (bench/smp.sh's columns).
#   3. The smallest -m (MiB) each image boots in on `-M pc`, -icount, by bisection over 64..512 MiB in
#      8 MiB steps (512 must boot; a boot that fails at N is taken to fail below N). Writes
#      OUT/microvm-mem.tsv: TAG IMAGE MIB (MIB 64 also when it boots in less).
#
# Expects OUT/TAG/{pvh,stock,elf-raw,elf-lz4,elf-zstd}.img and OUT/initramfs.cpio.gz (bench/run.sh
# makes them). KPACK_MICROVM_STEPS (default "boot smp mem") picks the steps;
# KPACK_MICROVM_MEM_TIMEOUT (default 400) bounds a bisection boot in seconds (a boot that ran out of
# RAM mostly ends at once, on a panic or a halt line).
set -euo pipefail

[[ $# -ge 5 ]] || { echo "usage: $0 OUT RUNS KASLR_RUNS SMP_ROUNDS TAG..." >&2; exit 2; }
out=$1 runs=$2 kaslr_runs=$3 smp_rounds=$4
shift 4
tags=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
initrd=$out/initramfs.cpio.gz
lock=/tmp/kpack-qemu.lock
source "$here/../tests/lib/qemu.sh"
steps=" ${KPACK_MICROVM_STEPS:-boot smp mem} "

machine_args() {  # MACHINE -> the QEMU options and extra kernel words of that machine
    case $1 in
        pc) echo "-M pc" ;;
        microvm) echo "-M microvm,acpi=on" ;;
    esac
}
machine_words() { [[ $1 == microvm ]] && echo "tsc_early_khz=2300000" || true; }

# boot LOG TIMEOUT MEM IMAGE WORDS QEMU-ARGS...: one -icount boot, one QEMU at a time (the lock other
# scripts honour). QEMU is stopped once the /init marker, a panic or a halt is in the log, or after
# TIMEOUT seconds; returns 0 iff the marker is there.
boot() {
    local log=$1 limit=$2 mem=$3 image=$4 words=$5
    shift 5
    : > "$log"
    qemu_machine "file:$log" --memory "$mem"
    exec 9>"$lock"
    flock 9
    qemu_run_until "$log" 'KPACK_INIT_OK|Kernel panic|System halted|kpack: halted' "$limit" "${qemu_cmd[@]}" -smp 1 \
        -kernel "$image" -initrd "$initrd" -append "console=ttyS0 panic=-1 kpack.debug $words" "${qemu_icount[@]}" "$@" \
        2>"$log.stderr" 9>&-
    exec 9>&-
    grep -aq 'KPACK_INIT_OK tsc=' "$log"
}

tsc_of() { grep -a -o 'KPACK_INIT_OK tsc=[0-9]*' "$1" | head -n1 | cut -d= -f2; }

if [[ $steps == *" boot "* ]]; then
    : > "$out/microvm.tsv"
    for tag in "${tags[@]}"; do
        for machine in pc microvm; do
            for spec in pvh:pvh stock:kaslr elf-raw:nokaslr elf-raw:kaslr elf-lz4:nokaslr elf-lz4:kaslr \
                        elf-zstd:nokaslr elf-zstd:kaslr; do
                image=${spec%%:*} setting=${spec#*:} n=$runs
                [[ $setting == kaslr ]] && n=$kaslr_runs
                words=$(machine_words "$machine")
                [[ $setting == nokaslr ]] && words+=" nokaslr"
                for ((run = 0; run < n; run++)); do
                    log=$out/$tag/$image.mvm-$machine-$setting.$run.log
                    boot "$log" 300 512M "$out/$tag/$image.img" "$words" $(machine_args "$machine") ||
                        { echo "microvm.sh: $tag/$image ($machine, $setting) did not reach /init; see $log" >&2; exit 1; }
                    tsc=$(tsc_of "$log")
                    printf '%s\t%s\t%s\t%s\t%d\t%s\n' "$tag" "$machine" "$image" "$setting" "$run" "$tsc" >> "$out/microvm.tsv"
                    echo "microvm: $tag $machine $image $setting tsc=$tsc" >&2
                done
            done
        done
    done
fi

if [[ $steps == *" smp "* ]]; then
    for machine in ${KPACK_MICROVM_SMP_MACHINES:-microvm pc}; do
        KPACK_SMP_MACHINE=$machine KPACK_SMP_CODECS=elf-lz4 KPACK_SMP_NAME=smp-elf-$machine \
            "$here/smp.sh" "$out" "$smp_rounds" "${tags[@]}"
    done
fi

if [[ $steps == *" mem "* ]]; then
    : > "$out/microvm-mem.tsv"
    for tag in "${tags[@]}"; do
        for image in stock elf-lz4 elf-zstd elf-raw; do
            # Steps k = 0..56 are 64 + 8k MiB; lo fails (or is below the range), hi boots.
            lo=-1 hi=56
            boot "$out/$tag/$image.mem512.log" 300 512M "$out/$tag/$image.img" "" ||
                { echo "microvm.sh: $tag/$image does not boot in 512 MiB; see $out/$tag/$image.mem512.log" >&2; exit 1; }
            while ((hi - lo > 1)); do
                mid=$(((lo + hi) / 2)) mib=$((64 + 8 * ((lo + hi) / 2)))
                if boot "$out/$tag/$image.mem$mib.log" "${KPACK_MICROVM_MEM_TIMEOUT:-400}" "${mib}M" "$out/$tag/$image.img" ""; then
                    hi=$mid
                else
                    lo=$mid
                fi
                echo "microvm: $tag $image -m ${mib}M: $([[ $hi == "$mid" ]] && echo boots || echo fails)" >&2
            done
            printf '%s\t%s\t%d\n' "$tag" "$image" $((64 + 8 * hi)) >> "$out/microvm-mem.tsv"
        done
    done
fi
