# Sourced by boot-corrupt.sh and boot-fault.sh, which boot a deliberately damaged kpack image of
# the test kernel and require the stub to stop it. Needs $here, the sourcing script's folder.
source "$here/../boot/fixture.sh"

# damaged_image_setup BUILD_DIR NAME: the test kernel and initramfs ($vmlinuz, $initrd, left by
# boot.fetch), and where the damaged image and its serial log go ($dir, $image, $log).
damaged_image_setup() {
    dir=$1/boot
    boot_fixture "$dir"
    image=$dir/bad-input-$2.bzImage
    log=$dir/bad-input-$2.serial.log
}

# require_no_kernel_start MESSAGE: fail with MESSAGE when the serial log shows the kernel started.
require_no_kernel_start() {
    if grep -aq 'Linux version' "$log"; then
        echo "$(basename "$0" .sh): FAIL: $1" >&2
        exit 1
    fi
}
