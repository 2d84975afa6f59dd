# Included by the QEMU boot suites that run one script per cell of a matrix (tests/loaders,
# tests/efi), so that every cell is registered the same way.

# Tests PREFIX.CELL.IMAGE for each IMAGE, each running SCRIPT KPACK CELL IMAGE BUILD_DIR.
# One vCPU each: TCG runs it on one host thread, so ctest -j2 (scripts/test.sh) runs two cells at
# once on a 2-core machine; the images they share are packed under a lock (fixture.sh). The kernel and initramfs come from boot.fetch (fixture boot_kernel); exit 77 is a skip (a
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
        TIMEOUT ${timeout}
        SKIP_RETURN_CODE 77)
    # The cell's control first: some checks compare with its log (loader-boot.sh's RSDP under
    # grub-efi), which must not be read while a parallel run still writes it.
    if(NOT image STREQUAL "stock" AND "stock" IN_LIST ARGN)
      set_tests_properties(${name} PROPERTIES DEPENDS ${prefix}.${cell}.stock)
    endif()
  endforeach()
endfunction()
