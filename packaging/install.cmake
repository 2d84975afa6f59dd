# What `cmake --install` puts where. The default component is the tool itself: kpack in bin/,
# kpack(1) and the bash completion (both rendered from doc/usage.txt). The kernel hooks are a
# component of their own (kernel-hooks, not installed by default): they go into /etc and, once
# enabled, change /boot, so only the package (packaging/debian) or an explicit
# `cmake --install BUILD --component kernel-hooks` installs them.
include(GNUInstallDirs)

install(TARGETS kpack RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${KPACK_DOC_DIR}/kpack.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# bash-completion loads completions on demand from <prefix>/share/bash-completion/completions for
# the prefixes in XDG_DATA_DIRS (/usr/local/share and /usr/share by default).
install(FILES ${KPACK_DOC_DIR}/kpack.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME kpack)

# The hooks only work where the system looks for them: Debian's kernel packages run /etc/kernel/*.d,
# the wrappers there run /usr/sbin/kpack-kernel-hook, and kernel-install reads
# /usr/lib/kernel/install.d. So this component's paths are absolute, whatever the prefix (DESTDIR
# still stages them).
set(hooks ${PROJECT_SOURCE_DIR}/packaging/kernel)
set(component COMPONENT kernel-hooks EXCLUDE_FROM_ALL)
install(PROGRAMS ${hooks}/kpack-kernel-hook DESTINATION /usr/sbin ${component})
install(FILES ${hooks}/kpack-kernel-hook.8 DESTINATION /usr/share/man/man8 ${component})
install(PROGRAMS ${hooks}/postinst.d/zz-kpack DESTINATION /etc/kernel/postinst.d ${component})
install(PROGRAMS ${hooks}/postrm.d/zz-kpack DESTINATION /etc/kernel/postrm.d ${component})
install(FILES ${hooks}/default-kpack DESTINATION /etc/default RENAME kpack ${component})
install(PROGRAMS ${hooks}/91-kpack.install DESTINATION /usr/lib/kernel/install.d ${component})
# GRUB: the stock kernels' and trial boots' entries (update-grub runs /etc/grub.d/*), GRUB_DEFAULT=saved
# while the hook is on (/etc/default/grub.d/*.cfg), and the unit that settles trial boots.
install(PROGRAMS ${hooks}/grub.d/11_kpack DESTINATION /etc/grub.d ${component})
install(FILES ${hooks}/grub-default-kpack.cfg DESTINATION /etc/default/grub.d RENAME kpack.cfg ${component})
install(FILES ${hooks}/kpack-trial.service DESTINATION /lib/systemd/system ${component})
