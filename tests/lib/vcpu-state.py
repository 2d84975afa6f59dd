#!/usr/bin/env python3
"""vcpu-state.py SOCKET SERIAL_LOG — where each vCPU of a guest that has not finished is, for the
post-mortem of a boot that hangs (tests/boot/boot.sh runs it just before its timeout ends QEMU).

Reads "info registers -a" through QEMU's QMP socket three times, half a second apart, and prints
one line per vCPU: its RIP in each sample (one value: stuck there; several: spinning) and HLT.
When kpack.debug printed the kernel's virtual base in SERIAL_LOG, each kernel RIP also gets its
link address, for System.map or gdb on the linux-image-*-dbg package's vmlinux (Debian's own
System.map is a placeholder).
Exit 0 after printing, 1 when QEMU did not answer."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qmp import Qmp  # noqa: E402

LINK_BASE = 0xFFFFFFFF81000000  # where x86-64 kernels are linked (CONFIG_PHYSICAL_START 16 MiB)


def kernel_slide(log_text):
    """How far kpack placed the kernel from its link address (kpack.debug's virtual base), or None."""
    base = re.search(r"virtual base (0x[0-9a-f]+)", log_text)
    return int(base.group(1), 16) - LINK_BASE if base else None


def describe(rip, slide):
    if slide is None or rip < LINK_BASE:
        return f"0x{rip:x}"
    return f"0x{rip:x} (linked 0x{rip - slide:x})"


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    sock, log = sys.argv[1], sys.argv[2]
    try:
        qmp = Qmp(sock, time.monotonic() + 5)
        samples = []
        for i in range(3):
            if i:
                time.sleep(0.5)
            samples.append(qmp.human("info registers -a").replace("\r\n", "\n"))
    except (OSError, EOFError, RuntimeError) as e:
        print(f"vcpu-state: QEMU did not answer on {sock}: {e}")
        return 1
    with open(log, "rb") as f:
        slide = kernel_slide(f.read().decode("latin-1"))
    for line in summarize(samples, slide):
        print(line)
    return 0


def summarize(samples, slide):
    """One line per vCPU from the "info registers -a" texts: its RIPs in order, first seen first."""
    cpus = {}
    for text in samples:
        for cpu, regs in re.findall(r"CPU#(\d+)\n(.*?)(?=\nCPU#|\Z)", text, re.S):
            rip = re.search(r"[RE]IP=([0-9a-f]+)", regs)
            halted = re.search(r"HLT=(\d)", regs)
            state = cpus.setdefault(int(cpu), {"rips": [], "hlt": set()})
            if rip and int(rip.group(1), 16) not in state["rips"]:
                state["rips"].append(int(rip.group(1), 16))
            if halted:
                state["hlt"].add(halted.group(1))
    lines = []
    for cpu in sorted(cpus):
        rips = ", ".join(describe(r, slide) for r in cpus[cpu]["rips"])
        lines.append(f"vcpu-state: vCPU {cpu}: HLT={'/'.join(sorted(cpus[cpu]['hlt']))} RIP {rips}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
