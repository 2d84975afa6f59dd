#!/usr/bin/env bash
# bench/run.sh [--quick] [--only PART[,PART...]] [--out DIR] [--no-write]
#
# Every figure of BENCHMARKS.md from one command. Builds kpack, fetches Debian's cloud kernels (Debian
# 12's 6.1: stock lz4; Debian 13's 6.12, 6.18 and the newest 7.x of trixie-backports: stock zstd), packs raw/gzip/lz4/zstd/xz images from each stock bzImage (so the
# header's facts, 5-level paging among them, and the relocation table come from the stock image;
# their sizes and the stubs' are measured every run), extracts each vmlinux and its relocation
# table (`kpack extract`) for the PVH boot and the host-side figures, then runs the parts:
#   legacy  SeaBIOS -kernel, one CPU: -icount TSC at /init of PVH, stock and every kpack image, with
#           QEMU's default CPU and with -cpu max; wall time to /init, median of interleaved rounds
#           (bench/guest.sh)
#   efi     OVMF -kernel, one CPU, -icount: stock, raw (both layouts), lz4, zstd (bench/efi.sh)
#   smp     -smp 2, every CPU against kpack.cpus=1, SeaBIOS and OVMF (bench/smp.sh)
#   host    kpack_host_bench: engine vs library vs stock-shaped decode, what verifying costs, and
#           the engine on two host threads against one (the ceiling for part smp's ratio here)
#   pack    pack time of `kpack --CODEC` against the codec's own CLI (bench/pack_time.sh)
#   kaslr   -icount boots with KASLR and with nokaslr (bench/kaslr.sh)
#   xz      Debian's generic kernel, whose stock image is xz (bench/xz.sh)
#   setup   what firmware, loader and 16-bit setup run before the stub (bench/setup.sh)
#   microvm kpack's ELF (`kpack --elf`) on -M pc and -M microvm: -icount TSC at /init against the
#           vmlinux's PVH boot and the stock bzImage, with KASLR and nokaslr; the smallest -m each
#           image boots in; -smp 2, every CPU against kpack.cpus=1 (bench/microvm.sh)
# Raw data stays in DIR (default build/bench-results); bench/report.py turns it into
# DIR/BENCHMARKS.md and DIR/headline.md, which replace BENCHMARKS.md and the README's
# `<!-- bench:headline -->` block unless --no-write is given or a part has no data yet.
# bench/results (committed; bench/publish.sh) keeps every part's newest data: it seeds DIR before
# the parts run and takes their data after each part (unless --no-write), so that `--only` on a
# fresh clone or another machine keeps the other parts' tables, and a run cut short keeps the parts
# it finished.
#   --quick  the same kernels, and one run per -icount figure (they repeat exactly), but
#            3 with -cpu max (its RDRAND makes each KASLR draw, kpack's and stock's, differ) and
#            every wall time and multi-CPU ratio at 5 interleaved runs or more (bench/README.md):
#            5 wall rounds, 5 pack runs, 10 SMP rounds, 15 host runs
#            (some 20-30 min a kernel on a quiet 2-core machine; the full run, some 2 hours a kernel)
#   --only   run just these parts; the other tables keep the data of the run that last made them,
#            which their tables name (or say they were never run)
# A missing tool or a failed part stops the run with a line naming it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KPACK_BUILD:-$repo/build}
out=$build/bench-results
all_parts=(legacy efi smp host pack kaslr xz setup microvm)
parts=("${all_parts[@]}") write=1 quick=
command="bench/run.sh${*:+ $*}"
while [[ $# -gt 0 ]]; do
    case $1 in
        --quick) quick=1; shift ;;
        --only) IFS=, read -r -a parts <<<"$2"; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --no-write) write=; shift ;;
        *) sed -n '2,/^[^#]/{/^#/p}' "$0" >&2; exit 2 ;;
    esac
done
log() { echo "bench: $*" >&2; }
fail() { echo "bench: FAILED: $*" >&2; exit 1; }
for part in "${parts[@]}"; do
    [[ " ${all_parts[*]} " == *" $part "* ]] || fail "no part named '$part' (parts: ${all_parts[*]})"
done

# Runs per figure: the full run, or --quick's few.
# Kernels as TAG=FETCH,ARGUMENTS (scripts/fetch-kernel.sh's, commas for spaces; "-" for none): Debian 12's 6.1 (stock lz4),
# Debian 13's 6.12 and trixie-backports' 6.18 (stock zstd, as every kernel since), and the newest
# trixie-backports kernel (7.x; its tag is its series, read from the version fetched).
debian13="6.12=--suite,trixie,6.12 6.18=--suite,trixie-backports,6.18"
newest="newest=--suite,trixie-backports"
if [[ -n $quick ]]; then
    kernel_specs="6.1=- $debian13 $newest" icount_runs=1 max_runs=3 wall_rounds=5 smp_rounds=10 host_runs=15 pack_runs=5 kaslr_runs=1 xz_runs=1 setup_runs=1
else
    kernel_specs="6.1=- $debian13 $newest" icount_runs=3 max_runs=5 wall_rounds=10 smp_rounds=10 host_runs=15 pack_runs=5 kaslr_runs=3 xz_runs=3 setup_runs=3
fi
# Wall times and multi-CPU ratios: at least 5 interleaved runs, whatever the mode (bench/README.md).
((wall_rounds >= 5 && smp_rounds >= 5 && host_runs >= 5 && pack_runs >= 5)) || fail "a noisy figure has fewer than 5 runs"

wants() { [[ " ${parts[*]} " == *" $1 "* ]]; }
need() {  # TOOL WHO: a tool a part needs, checked before anything runs
    command -v "$1" >/dev/null || fail "$2 needs '$1', which is not installed"
}
for tool in python3 lscpu qemu-system-x86_64 flock; do need "$tool" "every part"; done
ovmf=${OVMF:-/usr/share/qemu/OVMF.fd}
if wants efi || wants smp; then [[ -f $ovmf ]] || fail "parts efi and smp need OVMF at $ovmf (package ovmf)"; fi
if wants pack; then for tool in gzip lz4 zstd; do need "$tool" "part pack"; done; fi
if wants xz; then need xz "part xz"; fi

# The commit measured; the files this script writes do not count as local changes.
commit=$(git -C "$repo" rev-parse --short HEAD)
[[ -z $(git -C "$repo" status --porcelain --untracked-files=no -- . ':!BENCHMARKS.md' ':!README.md' ':!bench/prekernel.svg') ]] ||
    commit+=" with local changes"
stamp="\`$command\` at $commit on $(date -u '+%Y-%m-%d %H:%M UTC')"

nice_build() { nice -n 19 "$@"; }
cmake -S "$repo" -B "$build" >/dev/null
nice_build cmake --build "$build" -j2 --target kpack kpack_host_bench kpack_stub_blobs >/dev/null ||
    fail "building kpack, kpack_host_bench and the stubs"
kpack=$build/packer/kpack
mkdir -p "$out/stamps"
# The parts not run now keep the data they were last published with.
results=$repo/bench/results
[[ ! -d $results || $out -ef $results ]] || cp -r "$results/." "$out/"
"$repo/scripts/make-initramfs.sh" "$out/initramfs.cpio.gz" >/dev/null
{
    echo "$stamp"
    lscpu | sed -n 's/^Model name: *//p' | head -n1
    nproc
    qemu-system-x86_64 --version | head -n1
    uname -r
} > "$out/run.txt"
# The machine's load around the run: wall times and multi-CPU ratios suffer on a shared machine,
# -icount instruction counts do not.
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)

# The images every part boots, and their sizes (cheap, so every run measures them).
: > "$out/sizes.tsv"
kernels=
for spec in $kernel_specs; do
    tag=${spec%%=*} fetch_args=${spec#*=}
    fetch_args=${fetch_args//,/ }
    [[ $fetch_args != - ]] || fetch_args=
    # shellcheck disable=SC2086 # the fetch arguments are words
    vmlinuz=$("$repo/scripts/fetch-kernel.sh" $fetch_args) || fail "fetching the $tag kernel ($fetch_args)"
    if [[ $tag == newest ]]; then
        tag=$(basename "$(dirname "$vmlinuz")" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
        [[ -n $tag ]] || tag=$(basename "$vmlinuz" | sed -n 's/^vmlinuz-\([0-9]*\.[0-9]*\).*/\1/p')
        [[ -n $tag ]] || fail "no kernel series in $vmlinuz"
    fi
    kernels+="${kernels:+ }$tag"
    dir=$out/$tag
    mkdir -p "$dir"
    # The release (6.19 and later ship the image as /usr/lib/modules/RELEASE/vmlinuz) and the stock
    # payload's codec, which the report holds kpack's same codec against.
    release=$(basename "$vmlinuz"); [[ $release != vmlinuz ]] || release=vmlinuz-$(basename "$(dirname "$vmlinuz")")
    echo "$release" > "$dir/kernel.txt"
    # (lz4-legacy, the kernel's lz4 framing, is held against kpack's lz4.)
    "$kpack" info "$vmlinuz" | sed -n 's/^payload: \([a-z0-9]*\)[-,].*/\1/p' > "$dir/stock-codec.txt"
    [[ -s $dir/stock-codec.txt ]] || fail "kpack info names no payload codec for $vmlinuz"
    log "$tag: packing $vmlinuz"
    # The vmlinux boots through PVH (the floor) and feeds the host-side figures; its relocation
    # table goes with it to pack_time.sh.
    "$kpack" extract "$vmlinuz" -o "$dir/vmlinux" --relocs "$dir/vmlinux.relocs"
    cp "$vmlinuz" "$dir/stock.img"
    ln -sf vmlinux "$dir/pvh.img"
    # Every image from the stock bzImage, as a user packs it: its header says whether the kernel
    # runs with 5-level paging (a vmlinux without symbols does not), and its payload carries the
    # relocation table, so the kpack images move the kernel's virtual base as the stock image does
    # (KASLR), at the same cost. -q: Debian's image is signed, and its note would repeat per image.
    for codec in raw gzip lz4 zstd xz; do
        "$kpack" -q "--$codec" "$vmlinuz" -o "$dir/$codec.img"
    done
    # Raw's layout for UEFI, whose firmware reads every byte of the file (the efi part boots both).
    "$kpack" -q --raw --layout compact "$vmlinuz" -o "$dir/raw-compact.img"
    # The ELF outputs for the direct-boot VMMs.
    for codec in raw lz4 zstd; do
        "$kpack" -q --elf "--$codec" "$vmlinuz" -o "$dir/elf-$codec.img"
    done
    for image in vmlinux stock raw gzip lz4 zstd xz elf-raw elf-lz4 elf-zstd; do
        file=$dir/$image; [[ $image == vmlinux ]] || file+=.img
        printf '%s\t%s\t%s\t%s\n' "$tag" "$image" "$(stat -c %s "$file")" "$(du -B1 "$file" | cut -f1)" >> "$out/sizes.tsv"
    done
done
for stub in stub-raw stub-gzip stub-lz4 stub-zstd stub-xz setup16; do
    printf '%s\t%s\n' "$stub" "$(stat -c %s "$build/stub/$stub.bin")"
done > "$out/stubs.tsv"
echo "$stamp" > "$out/stamps/images"

load_now() { printf '%s\t%s\n' "$(date -u +%s)" "$(cut -d' ' -f1 /proc/loadavg)"; }  # EPOCH LOAD1
sample_load() {  # FILE: the 1-minute load average every 10 s, until killed
    while :; do
        load_now >> "$1"
        sleep 10
    done
}
run_part() {  # PART COMMAND...: its stamp names the run that made its data, once it succeeded
    local part=$1 sampler status=0; shift
    wants "$part" || return 0
    log "part $part"
    rm -f "$out/stamps/$part"
    # The load during the part (OUT/load/PART: EPOCH LOAD1), which the report compares with the cores.
    mkdir -p "$out/load"
    : > "$out/load/$part"
    sample_load "$out/load/$part" &
    sampler=$!
    "$@" || status=$?
    load_now >> "$out/load/$part"
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    ((status == 0)) || fail "part $part ($*)"
    echo "$stamp" > "$out/stamps/$part"
    # Published part by part: a run longer than the machine's session keeps the parts it finished.
    [[ -z $write ]] || "$repo/bench/publish.sh" "$out" || fail "bench/publish.sh after part $part"
}
legacy() {
    ICOUNT_RUNS=$icount_runs KPACK_BENCH_IMAGES="pvh stock raw gzip lz4 zstd xz" \
        "$repo/bench/guest.sh" "$out" "$wall_rounds" $kernels &&
    ICOUNT_RUNS=$max_runs KPACK_BENCH_IMAGES="pvh stock raw gzip lz4 zstd xz" KPACK_BENCH_NAME=icount-max \
        KPACK_BENCH_QEMU_ARGS="-cpu max" "$repo/bench/guest.sh" "$out" 0 $kernels
}
smp() {
    "$repo/bench/smp.sh" "$out" "$smp_rounds" $kernels &&
    KPACK_SMP_FIRMWARE=ovmf "$repo/bench/smp.sh" "$out" "$smp_rounds" $kernels
}
host() {
    local tag
    for tag in $kernels; do
        # --threads 2: the same engine on two host threads against one, this machine's own ceiling
        # for the guest's two-CPU decode ratio (part smp).
        "$build/bench/kpack_host_bench" "$out/$tag/vmlinux" --runs "$host_runs" --threads 2 > "$out/$tag/host.txt" ||
            return 1
    done
}
run_part legacy legacy
run_part efi env ICOUNT_RUNS=$icount_runs OVMF="$ovmf" "$repo/bench/efi.sh" "$out" $kernels
run_part smp smp
run_part host host
run_part pack "$repo/bench/pack_time.sh" "$kpack" "$out" "$pack_runs" $kernels
run_part kaslr "$repo/bench/kaslr.sh" "$out" "$kaslr_runs" $kernels
run_part xz "$repo/bench/xz.sh" "$kpack" "$out" "$xz_runs" "$pack_runs"
run_part setup "$repo/bench/setup.sh" "$out" "$setup_runs" $kernels
run_part microvm "$repo/bench/microvm.sh" "$out" "$icount_runs" "$max_runs" "$smp_rounds" $kernels

echo "$load_at_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end" >> "$out/run.txt"

[[ -z $write ]] || "$repo/bench/publish.sh" "$out" || fail "bench/publish.sh"
missing=
for part in "${all_parts[@]}"; do [[ -s $out/stamps/$part ]] || missing+=" $part"; done
python3 "$repo/bench/report.py" "$out" || fail "bench/report.py"
if [[ -n $missing ]]; then
    log "BENCHMARKS.md is not rewritten: no data yet for part(s)$missing (bench/run.sh --only them)"
elif [[ -n $write ]]; then
    cp "$out/BENCHMARKS.md" "$repo/BENCHMARKS.md"
    cp "$out/prekernel.svg" "$repo/bench/prekernel.svg"
    "$repo/bench/splice-headline.sh" "$out/headline.md" "$repo/README.md" || fail "splicing the README's headline"
    log "wrote BENCHMARKS.md, bench/prekernel.svg and README.md's headline block"
fi
log "report: $out/BENCHMARKS.md"
