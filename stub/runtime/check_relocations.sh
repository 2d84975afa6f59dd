#!/bin/sh
# The stub relocates itself and only knows R_X86_64_RELATIVE: fail the build on anything else.
set -eu
others=$(readelf -rW "$1" | grep -E '^[0-9a-f]+ +[0-9a-f]+ R_X86_64_' | grep -v R_X86_64_RELATIVE || true)
if [ -n "$others" ]; then
  echo "$1: relocations the stub cannot apply:" >&2
  echo "$others" >&2
  exit 1
fi
