#!/usr/bin/env bash
# smp-boot.sh KPACK_BINARY LOADER IMAGE CPUS STARTED BUILD_DIR [KERNEL WORDS...] — boot one kpack
# image through one loader (tests/loaders/loader-boot.sh) on a QEMU machine with CPUS processors,
# and check what the stub did with the application processors and what the kernel made of them:
#
#   - the stub's kpack.debug line "kpack: cpus: F found, S started, R ran, R returned, L late"
#     with F = CPUS (the firmware's table lists them all; 0 for a raw image, which decodes
#     nothing), S = STARTED, R = S (every AP that checked in ran the work and returned), and
#     L = CPUS - 1 - STARTED when the words hold
#     kpack.test_broken_trampoline (the APs sent START that never checked in), else 0; with
#     kpack.test_stopped_helper one AP never returns (the stub stops it with INIT after its
#     bounded wait) and the line must say "1 redone": the boot CPU decoded its frame again;
#     with kpack.cpus=1 (or nosmp, maxcpus=0/1, nr_cpus=1) the stub looks at nothing: "0 found, 0
#     started"; "frames: N, H by helpers"
#     with H >= 1 when an AP returned from the work, H = 0 when none started;
#   - when frames were decoded, the boot CPU's "kpack: QEMU TCG: software TLB grown" line; when
#     helpers decoded some, the "kpack: decode timeline" line, its helper joining before the end;
#   - /init's marker (KPACK_INIT_OK), and /sys/devices/system/cpu/online = 0-(CPUS-1) ("0" for one):
#     the kernel started every AP after the stub parked them, whatever the stub did.
#
# KERNEL WORDS are added to the kernel command line (e.g. kpack.cpus=2); KPACK_SMP_QEMU_ARGS (e.g.
# -no-acpi) to QEMU's; KPACK_SMP_KERNEL_ONLINE replaces the expected online list (a kernel without
# CONFIG_X86_MPPARSE, like Debian's, runs on one CPU where only an MP table lists the others);
# KPACK_SMP_XXH3 (AVX2 or SSE2) the XXH3 build the line must name (lz4 and zstd images).
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

[[ $# -ge 6 ]] || { echo "usage: $0 KPACK_BINARY LOADER IMAGE CPUS STARTED BUILD_DIR [WORDS...]" >&2; exit 2; }
kpack=$1 loader=$2 image=$3 smp=$4 started=$5 build=$6
cpus=${smp%%,*}   # SMP may carry QEMU's topology too: 4,sockets=4
shift 6
words="$*"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
qemu_args=(-smp "$smp" ${KPACK_SMP_QEMU_ARGS:-})
case_words="$words ${smp#$cpus} ${KPACK_SMP_QEMU_ARGS:-}"
tag=-smp$cpus$(echo "$case_words" | tr -c 'a-z0-9\n' '_' | tr -s '_' | sed 's/_$//; s/^_*\(.\)/_\1/')
source "$here/../boot/fixture.sh"
# loader-boot.sh names a LOADER-la57 (or -no5lvl) boot's log after LOADER, then the variant.
log_name=$loader-$image$tag
case $loader in *-la57 | *-no5lvl) log_name=${loader%-*}-$image-${loader##*-}$tag ;; esac
log=$(loader_dir "$build/boot")/$log_name.serial.log

status=0
KPACK_LOADER_TAG=$tag KPACK_APPEND="kpack.cpuonline $words" \
    "$here/../loaders/loader-boot.sh" "$kpack" "$loader" "$image" "$build" "${qemu_args[@]}" || status=$?
[[ $status -eq 0 ]] || exit $status

fail() { echo "smp-boot: FAIL: $*; see $log" >&2; exit 1; }

line=$(grep -a -m1 'kpack: cpus: [0-9]* found' "$log" | tr -d '\r') || fail "no 'kpack: cpus:' line"
# The boot CPU's stack (32 KiB in the image): a stub that comes within a quarter of its end is one
# inlining change away from overwriting the helpers' state below it (no AP then starts).
stack=$(grep -a -m1 -o 'kpack: stack bytes=[0-9]* of [0-9]*' "$log") || fail "no 'kpack: stack' line"
read -r used size < <(echo "$stack" | sed 's/.*bytes=\([0-9]*\) of \([0-9]*\)/\1 \2/')
echo "smp-boot: $stack"
(( used * 4 <= size * 3 )) || fail "the boot stack went $used bytes deep of $size, more than three quarters"
echo "smp-boot: $line"
grep -a 'kpack: cpus: one CPU' "$log" || true
read -r found got ran returned late < <(echo "$line" |
    sed -n 's/.*cpus: \([0-9]*\) found, \([0-9]*\) started, \([0-9]*\) ran, \([0-9]*\) returned, \([0-9]*\) late.*/\1 \2 \3 \4 \5/p')
[[ -n ${late:-} ]] || fail "cannot read '$line'"

want_found=$cpus want_late=0
# kpack.cpus=1, or a kernel that brings up one CPU (nosmp, maxcpus=0 or 1, nr_cpus=1: a crash
# kernel's): the stub looks for no other CPU.
case " $words " in
    *" kpack.cpus=1 "* | *" nosmp "* | *" maxcpus=0 "* | *" maxcpus=1 "* | *" nr_cpus=1 "*) want_found=0 ;;
esac
[[ $image != raw && $image != *-raw ]] || want_found=0   # a raw image decodes nothing: no CPU is looked for
[[ " $words " != *" kpack.test_broken_trampoline "* ]] || want_late=$((cpus - 1 - started))
[[ $found -eq $want_found ]] || fail "$found CPUs found, expected $want_found"
[[ $got -eq $started ]] || fail "$got APs started, expected $started"
want_returned=$started want_redone=0
if [[ " $words " == *" kpack.test_stopped_helper "* ]]; then want_returned=$((started - 1)) want_redone=1; fi
[[ $ran -eq $started && $returned -eq $want_returned ]] ||
    fail "$ran ran and $returned returned, expected $started and $want_returned"
[[ $line == *" by helpers, $want_redone redone"* ]] || fail "expected $want_redone items redone by the boot CPU"
[[ $late -eq $want_late ]] || fail "$late APs did not check in, expected $want_late"
# The helpers must have decoded something, not merely run: at least one frame when an AP ran the
# work to its end, none when no AP started.
by_helpers=$(echo "$line" | sed -n 's/.*frames: [0-9]*, \([0-9]*\) by helpers.*/\1/p')
[[ -n $by_helpers ]] || fail "cannot read the frames decoded by helpers in '$line'"
if [[ $started -eq 0 ]]; then
    [[ $by_helpers -eq 0 ]] || fail "$by_helpers frames decoded by helpers, but no AP started"
elif [[ $want_returned -gt 0 ]]; then
    [[ $by_helpers -ge 1 ]] || fail "no frame decoded by the $started helpers"
    # The decode's timeline (cycles from the work's handing out): a helper joins before the last
    # CPU leaves the queue, or the line says nothing true.
    timeline=$(grep -a -m1 -o 'kpack: decode timeline: first helper joined at [0-9]*, boot CPU done at [0-9]*, helpers done at [0-9]*' "$log") ||
        fail "no 'kpack: decode timeline' line though $by_helpers frames were decoded by helpers"
    read -r joined caller helpers_done <<<"$(echo "$timeline" | sed 's/[^0-9 ]//g; s/  */ /g')"
    last=$((caller > helpers_done ? caller : helpers_done))
    [[ $joined -lt $last ]] || fail "'$timeline': the first helper joined after every CPU was done"
fi

# Every CPU that decodes grows QEMU's software TLB first (stub/arch/emulated_tlb.h); these boots
# all run on TCG, so the boot CPU's line must be there whenever frames were decoded.
frames=$(echo "$line" | sed -n 's/.*frames: \([0-9]*\),.*/\1/p')
if [[ ${frames:-0} -gt 0 ]]; then
    tlb=$(grep -a -m1 -o 'kpack: QEMU TCG: software TLB grown, [0-9]* pages touched' "$log") ||
        fail "no 'kpack: QEMU TCG: software TLB grown' line: the boot CPU decoded with the TLB QEMU left it"
    [[ ${tlb//[^0-9]/} -gt 0 ]] || fail "'$tlb': no page touched"
fi

if [[ -n ${KPACK_SMP_XXH3:-} ]]; then
    [[ $line == *"; XXH3 with $KPACK_SMP_XXH3" ]] || fail "the frames were not proved by XXH3 with $KPACK_SMP_XXH3"
fi

online=$(grep -a -m1 '^KPACK_CPU_ONLINE ' "$log" | tr -d '\r' | cut -d' ' -f2) || fail "no KPACK_CPU_ONLINE line"
want_online=0; [[ $cpus -eq 1 ]] || want_online=0-$((cpus - 1))
want_online=${KPACK_SMP_KERNEL_ONLINE:-$want_online}
[[ $online == "$want_online" ]] || fail "the kernel has CPUs $online online, expected $want_online"
echo "smp-boot: PASS: $loader $image -smp $cpus ${words:-(no words)}: $started started, kernel online $online"
