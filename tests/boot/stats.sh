#!/usr/bin/env bash
# stats.sh KPACK_BINARY BUILD_DIR CODEC — the run report against kpack.debug, on one boot.
#
# Boots kpack --CODEC of the 6.1 test kernel on two CPUs with kpack.debug (the stub's numbers on
# COM1) and kpack.setupdata (init prints every setup_data node in hex), rebuilds the node
# directories the kernel showed under /sys/kernel/boot_params/setup_data, runs
# `kpack stats --from` on them, and requires each phase's cycles and bytes, the CPUs and the frames
# to be the numbers kpack.debug printed.
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 KPACK_BINARY BUILD_DIR CODEC" >&2; exit 2; }
kpack=$1 dir=$2/boot codec=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir"

image=$(packed_image "$kpack" "$codec" "$vmlinuz" "$dir/stats")
log=$dir/stats-$codec.serial.log
KPACK_APPEND="kpack.debug kpack.setupdata" "$here/boot.sh" --log "$log" "$image" "$initrd" -smp 2

fail() { echo "stats: FAIL: $*; see $log" >&2; exit 1; }
# The serial log read once, without its CRs. Everything below reads this copy, never a pipe from the
# file: a grep -m1 leaving such a pipe early would fail it, under pipefail, with the writer's SIGPIPE.
serial_text=$(tr -d '\r' < "$log")

# The nodes, as the kernel showed them.
nodes=$dir/stats-$codec.setup_data
rm -rf "$nodes" && mkdir -p "$nodes"
sed -n '/^KPACK_SETUP_DATA_BEGIN/,/^KPACK_SETUP_DATA_END/p' <<< "$serial_text" |
    while read -r marker index type data; do
        [[ $marker == KPACK_SETUP_DATA_NODE ]] || continue
        mkdir -p "$nodes/$index"
        echo "${type#type=}" > "$nodes/$index/type"
        python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "${data#data=}" \
            > "$nodes/$index/data"
    done
stats=$("$kpack" stats --from "$nodes") || fail "kpack stats --from $nodes failed"
echo "$stats"

# Each kpack.debug phase line "kpack: NAME bytes=B cycles=C" as "NAME B C", and the same from stats'
# "phase NAME: ... (C cycles), B bytes" (or "C cycles, B bytes" without a TSC rate).
debug_phases=$(sed -nE 's/^kpack: ([a-z ]+) bytes=([0-9]+) cycles=([0-9]+)$/\1 \2 \3/p' <<< "$serial_text")
stats_phases=$(sed -nE 's/^phase ([a-z ]+): (.*[( ])?([0-9]+) cycles\)?, ([0-9]+) [a-z]+$/\1 \4 \3/p' <<< "$stats")
[[ -n $debug_phases ]] || fail "no kpack.debug phase lines"
[[ $debug_phases == "$stats_phases" ]] ||
    fail "phases differ: kpack.debug '$debug_phases', kpack stats '$stats_phases'"

# "kpack: cpus: F found, S started, R ran, T returned, L late; cycles=C; frames: N, H by helpers, D redone"
cpus_line=$(grep -a -m1 '^kpack: cpus: ' <<< "$serial_text") || fail "no kpack.debug cpus line"
debug_cpus=$(sed -E 's/^kpack: cpus: ([^;]*);.*/\1/' <<< "$cpus_line")
debug_frames=$(sed -E 's/.*; (frames: [0-9]+, [0-9]+ by helpers, [0-9]+ redone).*/\1/' <<< "$cpus_line")
debug_start=$(sed -E 's/.*; cycles=([0-9]+);.*/\1/' <<< "$cpus_line")
grep -qxF "$debug_frames" <<< "$stats" || fail "stats has no line '$debug_frames'"
grep -qE "^cpus: $debug_cpus; the last joined the decode (.*\()?$debug_start cycles\)? after it began$" <<< "$stats" ||
    fail "stats has no cpus line for '$debug_cpus' and $debug_start cycles"
grep -qx "entry: boot protocol 16/32-bit; codec: $codec" <<< "$stats" || fail "wrong entry or codec"
echo "stats: PASS: kpack stats matches kpack.debug ($(wc -l <<< "$debug_phases") phases, $debug_cpus)"
