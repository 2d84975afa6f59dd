# Included by the QEMU boot suites that run one script per cell of a matrix (tests/loaders,
# tests/efi), so that every cell is registered the same way.

# Tests PREFIX.CELL.IMAGE for each IMAGE, each running SCRIPT KPACK CELL IMAGE BUILD_DIR.
# RUN_SERIAL: one QEMU at a time, whatever -j ctest was given (TCG wants a whole core, and CI has
# two). The kernel and initramfs come from boot.fetch (fixture boot_kernel); exit 77 is a skip (a
# tool or firmware file missing here).
function(kpack_add_qemu_boot_tests prefix cell script labels timeout)
  if(NOT TARGET kpack)  # a fuzzing build (KPACK_FUZZ) has no packer to boot
    return()
  endif()
  foreach(image ${ARGN})
    set(name ${prefix}.${cell}.${image})
    add_test(NAME ${name} COMMAND "${script}" "$<TARGET_FILE:kpack>" ${cell} ${image} "${CMAKE_BINARY_DIR}")
    set_tests_properties(${name} PROPERTIES
        LABELS "${labels}"
        FIXTURES_REQUIRED boot_kernel
        RUN_SERIAL TRUE
        TIMEOUT ${timeout}
        SKIP_RETURN_CODE 77)
  endforeach()
endfunction()
