#!/usr/bin/env bash
# loader-boot.sh KPACK_BINARY LOADER IMAGE BUILD_DIR [QEMU ARGS...] — boot one image through one
# boot loader.
#
# IMAGE is stock (the Debian bzImage itself, the control) or a kpack codec: raw, gzip, lz4, zstd, xz,
# or raw-compact (--raw --layout compact; raw is the in-place layout), packed from that same bzImage. LOADER is one of:
#   seabios          QEMU -kernel with its default firmware (as tests/boot's boot-kpack.sh does,
#                    but with this script's images, names and arguments; not in the matrix)
#   qboot            QEMU -kernel with qboot instead of SeaBIOS (16-bit entry via its option ROM)
#   microvm          QEMU -M microvm,acpi=off -kernel (qboot-based firmware; power-off does not
#                    end QEMU there, so the harness stops it at the marker)
#   pvh              QEMU -kernel of an ELF (IMAGE elf-CODEC: kpack --elf) on the pc machine: its PVH
#                    note, entered by SeaBIOS's pvh.bin option ROM (32-bit, paging off, EBX =
#                    hvm_start_info)
#   pvh-microvm      the same on -M microvm,acpi=on through its qboot firmware; acpi=on for the
#                    MADT (the CPUs), tsc_early_khz because its kernel cannot calibrate the TSC there
#                    under TCG (tests/smp/CMakeLists.txt), the harness stops QEMU at the marker
#   ovmf             QEMU -kernel with OVMF: a non-PE image goes through OVMF's legacy Linux loader,
#                    which leaves long mode and enters at code32_start (32-bit entry)
#   grub-linux       GRUB (i386-pc) from a grub-mkrescue ISO, `linux`   (32-bit entry)
#   grub-linux16     GRUB (i386-pc) from the same kind of ISO, `linux16` (16-bit entry)
#   grub-efi         GRUB (x86_64-efi) under OVMF, `linux`: without an EFI handover offset GRUB
#                    2.06 uses its i386 loader, which drops to 32-bit mode (32-bit entry)
#   isolinux         ISOLINUX from an xorriso ISO, `LINUX` + `INITRD` (16-bit entry)
#   kexec            the stock kernel boots, then `kexec -l` (kexec-tools' bzImage64, 64-bit entry)
#   kexec-file       the same with `kexec -s -l` (kexec_file_load: the kernel's bzImage64 loader)
#   kexec-high       `kexec -l` in a 6 GiB guest: kexec-tools' bzImage64 loader takes the highest
#                    hole, so the image runs from above 4 GiB (XLF_CAN_BE_LOADED_ABOVE_4G)
#   kdump            the stock kernel boots with crashkernel=256M, loads the image with `kexec -p`
#                    and panics on its last CPU: the image boots as the crash kernel there, with
#                    KPACK_APPEND's words only on its command line (nr_cpus=1, disable_cpu_apicid=)
#   LOADER-la57      LOADER (any of the above, or seabios) under -cpu max, whose CPU has LA57 under
#                    TCG: the kernel must run with 5-level paging, as it does from the stock image
#                    (/init's KPACK_PAGING_LEVELS=5). kexec-la57 and kexec-file-la57 enter the image
#                    from a 5-level kernel, i.e. with LA57 already on.
#   LOADER-no5lvl    the same with no5lvl on the command line: 4 levels
# Pass iff the booted kernel's /init prints KPACK_INIT_OK (tests/boot/boot.sh). Files are written to
# BUILD_DIR/boot/loaders, named after LOADER and IMAGE; exit 77 (skip) when a tool is missing.
# KPACK_KERNEL_TAG picks another kernel than 6.1 (tests/kernels.txt; its files under loaders/TAG).
#
# For other suites (tests/setup16): QEMU ARGS are added to the machine; KPACK_APPEND is added to
# the kernel command line of every loader; KPACK_LOADER_TAG is appended to the names of the files
# this test writes (logs, ISOs), so such runs leave the matrix's logs alone; KPACK_STOP_ON_MARKER=1
# ends QEMU at the marker.
set -euo pipefail

[[ $# -ge 4 ]] || { echo "usage: $0 KPACK_BINARY LOADER IMAGE BUILD_DIR [QEMU ARGS...]" >&2; exit 2; }
kpack=$1 loader=$2 kind=$3 build_dir=$4 boot_dir=$4/boot
shift 4
extra=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
boot_sh=$here/../boot/boot.sh
source "$here/../boot/fixture.sh"
out=$(loader_dir "$boot_dir")
mkdir -p "$out"
name=$loader-$kind${KPACK_LOADER_TAG:-}

# LOADER-la57 / LOADER-no5lvl: LOADER itself under -cpu max, then the paging levels /init saw.
levels=
case $loader in
    *-la57) levels=5 ;;
    *-no5lvl) levels=4 ;;
esac
if [[ -n $levels ]]; then
    base=${loader%-*} variant=${loader##*-}
    words="kpack.paging ${KPACK_APPEND:-}"
    [[ $variant != no5lvl ]] || words="no5lvl $words"
    status=0
    KPACK_LOADER_TAG="-$variant${KPACK_LOADER_TAG:-}" KPACK_APPEND="$words" \
        "$0" "$kpack" "$base" "$kind" "${boot_dir%/boot}" -cpu max "${extra[@]}" || status=$?
    [[ $status -eq 0 ]] || exit $status
    log=$out/$base-$kind-$variant${KPACK_LOADER_TAG:-}.serial.log
    if ! grep -aq "KPACK_PAGING_LEVELS=$levels" "$log"; then
        echo "loader-boot: FAIL: the kernel did not run with $levels-level paging; see $log" >&2
        exit 1
    fi
    exit 0
fi

boot_fixture "$boot_dir" "$(kernel_tag)"
# Tight per-boot leash: a good boot takes 3-30 s under TCG (OVMF and GRUB EFI are the slow ones).
timeout_s=${KPACK_LOADER_TIMEOUT:-90}
append="kpack.debug ${KPACK_APPEND:-}"
cmdline="console=ttyS0 panic=-1 $append"

source "$here/../lib/matrix_boot.sh"
image=$(matrix_image "$kpack" "$kind" "$out")

# GRUB's EFI `linux` enters at the boot protocol with efi_info filled: the stub must have taken
# free memory from the EFI map (kpack.debug says so), and the kernel the RSDP stock got, from the
# firmware's configuration table: compared with the log of the stock image through the same loader
# and tag, which this script boots first when no earlier run (loaders.grub-efi.stock) left one.
check_efi_firmware_view() {
    if ! grep -aq 'kpack: free memory from the EFI memory map' "$log"; then
        echo "loader-boot: FAIL: free memory did not come from the EFI memory map; see $log" >&2
        return 1
    fi
    local stock_log=$out/grub-efi-stock${KPACK_LOADER_TAG:-}.serial.log ours theirs
    if [[ ! -s $stock_log ]]; then
        echo "loader-boot: no $stock_log to compare the RSDP with: booting the stock image through $loader first"
        "$0" "$kpack" "$loader" stock "$build_dir" "${extra[@]}" || true
    fi
    if [[ ! -s $stock_log ]] || ! grep -aq KPACK_INIT_OK "$stock_log"; then
        echo "loader-boot: FAIL: no stock boot through $loader to compare the RSDP with: $stock_log is missing or incomplete" >&2
        return 1
    fi
    ours=$(grep -aoE 'ACPI: RSDP 0x[0-9A-Fa-f]+' "$log" | head -1)
    theirs=$(grep -aoE 'ACPI: RSDP 0x[0-9A-Fa-f]+' "$stock_log" | head -1)
    if [[ -z $ours || $ours != "$theirs" ]]; then
        echo "loader-boot: FAIL: '${ours:-no RSDP line}' where stock says '${theirs:-no RSDP line}'; see $log" >&2
        return 1
    fi
}

# Through every loader, the kernel keeps the stub's run report (boot.sh checks init's setup_data line).
[[ $kind == stock ]] || export KPACK_EXPECT_RUN_REPORT=1

ovmf=/usr/share/qemu/OVMF.fd
log=$out/$name.serial.log
boot=("$boot_sh" --timeout "$timeout_s" --log "$log")
# KPACK_STOP_ON_MARKER=1: for machines whose power-off does not end QEMU (e.g. -no-acpi).
[[ -z ${KPACK_STOP_ON_MARKER:-} ]] || boot+=(--stop-on-marker)

case $loader in
    seabios)
        exec env KPACK_APPEND="$append" "${boot[@]}" "$image" "$initrd" "${extra[@]}" ;;
    qboot)
        need_file /usr/share/qemu/qboot.rom
        exec env KPACK_APPEND="$append" "${boot[@]}" "$image" "$initrd" -bios /usr/share/qemu/qboot.rom "${extra[@]}" ;;
    microvm)
        exec env KPACK_APPEND="$append" "${boot[@]}" --stop-on-marker "$image" "$initrd" -M microvm,acpi=off "${extra[@]}" ;;
    pvh)
        exec env KPACK_APPEND="$append" "${boot[@]}" "$image" "$initrd" "${extra[@]}" ;;
    pvh-microvm)
        exec env KPACK_APPEND="tsc_early_khz=2300000 $append" "${boot[@]}" --stop-on-marker "$image" "$initrd" \
            -M microvm,acpi=on "${extra[@]}" ;;
    ovmf)
        need_file "$ovmf"
        exec env KPACK_APPEND="$append" "${boot[@]}" "$image" "$initrd" -bios "$ovmf" "${extra[@]}" ;;
    grub-linux|grub-linux16|grub-efi)
        need grub-mkrescue xorriso mformat
        if [[ $loader == grub-efi ]]; then
            need_file /usr/lib/grub/x86_64-efi/linux.mod "$ovmf"
            cmd=linux firmware=(-bios "$ovmf")
        else
            need_file /usr/lib/grub/i386-pc/linux16.mod
            cmd=${loader#grub-} firmware=()
        fi
        tree=$out/$name.tree
        rm -rf "$tree" && mkdir -p "$tree/boot/grub"
        # Hard links: the ISO tree costs no space or copy time.
        ln -f "$image" "$tree/boot/kernel" 2>/dev/null || cp "$image" "$tree/boot/kernel"
        ln -f "$initrd" "$tree/boot/initrd" 2>/dev/null || cp "$initrd" "$tree/boot/initrd"
        # GRUB on the serial port too, so a loader error ends up in the log next to the stub's.
        cat > "$tree/boot/grub/grub.cfg" <<EOF
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
echo "loader-boot: GRUB \$grub_platform $cmd"
$cmd /boot/kernel $cmdline
initrd${cmd#linux} /boot/initrd
boot
EOF
        iso=$out/$name.iso
        grub-mkrescue -o "$iso" "$tree" >"$out/$name.mkrescue.log" 2>&1 \
            || { cat "$out/$name.mkrescue.log" >&2; exit 1; }
        rm -rf "$tree"
        status=0
        "${boot[@]}" --no-kernel "$image" "$initrd" -cdrom "$iso" "${firmware[@]}" "${extra[@]}" || status=$?
        [[ $status -ne 0 ]] || rm -f "$iso"   # ~50 MB each; kept only for post-mortems
        [[ $status -ne 0 || $loader != grub-efi || $kind == stock ]] || check_efi_firmware_view || status=1
        exit $status ;;
    isolinux)
        need xorriso
        need_file /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32
        tree=$out/$name.tree
        rm -rf "$tree" && mkdir -p "$tree/isolinux"
        cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$tree/isolinux/"
        ln -f "$image" "$tree/kernel" 2>/dev/null || cp "$image" "$tree/kernel"
        ln -f "$initrd" "$tree/initrd.gz" 2>/dev/null || cp "$initrd" "$tree/initrd.gz"
        cat > "$tree/isolinux/isolinux.cfg" <<EOF
SERIAL 0 115200
DEFAULT k
PROMPT 0
TIMEOUT 0
LABEL k
  LINUX /kernel
  INITRD /initrd.gz
  APPEND $cmdline
EOF
        iso=$out/$name.iso
        xorriso -as mkisofs -quiet -o "$iso" -R -J -b isolinux/isolinux.bin -c isolinux/boot.cat \
            -no-emul-boot -boot-load-size 4 -boot-info-table "$tree"
        rm -rf "$tree"
        status=0
        "${boot[@]}" --no-kernel "$image" "$initrd" -cdrom "$iso" "${extra[@]}" || status=$?
        [[ $status -ne 0 ]] || rm -f "$iso"
        exit $status ;;
    kexec|kexec-file|kexec-high|kdump)
        stage1=$out/$name.cpio
        "$here/make-kexec-initramfs.sh" "$out/kexec-base.cpio" "$image" "$initrd" "$stage1"
        flags=; [[ $loader != kexec-file ]] || flags=-s
        first_append="kpack_kexec_flags=$flags ${KPACK_APPEND:-}"
        if [[ $loader == kdump ]]; then
            # One word for the first kernel's command line: the crash kernel's, commas for spaces.
            # shellcheck disable=SC2086 # echo joins the words with single spaces
            words=$(echo ${KPACK_APPEND:-} | tr ' ' ',')
            first_append="kpack_kexec_flags= crashkernel=256M kpack_crash_words=${words:-kpack.none}"
        fi
        # The stock kernel (SeaBIOS, -kernel) is the first stage in every case: only the kexec'd
        # image varies. 1 GiB: the first stage holds the image and the second initramfs in tmpfs.
        # TCG allocates guest RAM lazily, so 6 GiB costs only what the kernels touch.
        mem=1G; [[ $loader != kexec-high ]] || mem=6G
        status=0
        KPACK_APPEND=$first_append "${boot[@]}" "$vmlinuz" "$stage1" -m "$mem" "${extra[@]}" || status=$?
        [[ $status -ne 0 ]] || rm -f "$stage1"
        # The point of kexec-high is an image above 4 GiB: make sure it was (kpack.debug says).
        if [[ $status -eq 0 && $loader == kexec-high && $kind != stock ]] &&
            ! grep -aEq 'kpack: .* image at 0x[0-9a-f]{9,}' "$log"; then
            echo "loader-boot: FAIL: the image was not loaded above 4 GiB; see $log" >&2
            status=1
        fi
        exit $status ;;
    *)
        echo "loader-boot: unknown loader '$loader'" >&2; exit 2 ;;
esac
