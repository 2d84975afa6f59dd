#!/bin/sh
# check_position_independent.sh OBJECT... — the code that runs before the stub relocates itself
# (entry64.S: prepare_boot_inputs, and what it calls) must reach everything
# RIP-relative. Fails on any relocation in a loaded section other than PC-relative ones; debug
# sections are not loaded and are skipped.
set -eu
status=0
for object in "$@"; do
  bad=$(readelf -rW "$object" | awk '
    /^Relocation section/ { name = $3; gsub(/\047/, "", name); loaded = name !~ /^\.rela\.debug/; next }
    loaded && $3 ~ /^R_X86_64_/ && $3 != "R_X86_64_PC32" && $3 != "R_X86_64_PLT32" { print name ": " $0 }')
  if [ -n "$bad" ]; then
    echo "$object: absolute relocations in code that runs before self-relocation:" >&2
    echo "$bad" >&2
    status=1
  fi
done
exit $status
