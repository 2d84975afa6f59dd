#!/usr/bin/env python3
"""vga-text.py SOCKET OUT TIMEOUT PATTERN... — read a QEMU guest's VGA text screen through QMP.

Connects to the QMP socket SOCKET (QEMU started with -qmp unix:SOCKET,server=on,wait=off), then
every half second saves the whole text window 0xb8000-0xbffff (32 KiB: vgacon scrolls through all
of it) with pmemsave into OUT, and turns it into text: the characters are the even bytes, 80 a row.
Exits 0 as soon as every PATTERN (a plain substring) has been in the text (not necessarily in the
same read: early lines scroll out of the window), 1 when TIMEOUT seconds pass first or QEMU goes
away, or the guest has stopped (powered off: QEMU runs with -no-shutdown, so a failing image costs
the boot, not the timeout) without showing them. Either way the non-blank rows of the last read are printed, and written
to OUT.txt. Exit 2: the socket never answered (given QEMU_PID in the environment, the wait for it
ends as soon as that process is gone).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from qmp import Qmp  # noqa: E402

WINDOW, SIZE, COLS = 0xB8000, 0x8000, 80


def screen_text(path):
    with open(path, "rb") as f:
        data = f.read()
    chars = "".join(chr(b) if 0x20 <= b < 0x7F else " " for b in data[0::2])
    return [chars[i:i + COLS].rstrip() for i in range(0, len(chars), COLS)]


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    sock, out, timeout, patterns = sys.argv[1], os.path.abspath(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
    deadline = time.monotonic() + timeout
    try:
        qmp = Qmp(sock, deadline)
    except OSError as e:
        print(f"vga-text: no QMP at {sock}: {e}", file=sys.stderr)
        return 2
    rows, found, status = [], [], 1
    try:
        while True:
            # The state first, the screen second: a guest that had stopped is read once more.
            state = qmp.command("query-status").get("status")
            qmp.command("pmemsave", val=WINDOW, size=SIZE, filename=out)
            rows = screen_text(out)
            text = "\n".join(rows)
            found += [p for p in patterns if p in text and p not in found]
            if len(found) == len(patterns):
                status = 0
                break
            if state in ("shutdown", "guest-panicked", "internal-error"):
                print(f"vga-text: the guest stopped ({state})", file=sys.stderr)
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
    except (EOFError, OSError, RuntimeError) as e:
        print(f"vga-text: QEMU went away: {e}", file=sys.stderr)
    with open(out + ".txt", "w") as f:
        f.write("\n".join(r for r in rows if r) + "\n")
    print("---- VGA text window 0xb8000-0xbffff (non-blank rows) ----")
    for r in rows:
        if r:
            print(r)
    print("---- end of VGA text ----")
    missing = [p for p in patterns if p not in found]
    print(f"vga-text: {'found' if status == 0 else 'MISSING'} {missing if missing else patterns}")
    return status


if __name__ == "__main__":
    sys.exit(main())
