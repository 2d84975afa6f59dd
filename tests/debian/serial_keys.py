#!/usr/bin/env python3
"""serial_keys.py SOCKET SECONDS ACTION... — a person at the serial console of a QEMU guest.

Connects to QEMU's console chardev (a Unix socket QEMU listens on; QEMU's own logfile keeps the
full console), then performs each ACTION in order, all within SECONDS:

  wait:REGEX   until the console, its terminal escape sequences removed, shows REGEX (Python
               syntax) after what earlier waits matched
  keys:TEXT    types TEXT, one key at a time; escapes as in Python strings: \\r is Enter,
               \\x1b[B the down arrow (what a VT100 terminal sends, and OVMF reads)
  sleep:S      waits S seconds (a prompt that reads its keys only after drawing itself)

Prints each action as it completes; on a timeout, the last 20 lines seen, and exits 1.
"""
import re
import socket
import sys
import threading
import time

ESCAPES = re.compile(rb"\x1b(\[[0-9;=?]*[A-Za-z]|[()][0-9A-Za-z])")


def connect(path, deadline):
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, seconds, actions = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    deadline = time.monotonic() + seconds
    sock = connect(path, deadline)
    # A reader that never stops draining the console: a guest whose output is not read fast enough
    # loses it (QEMU's UART drops what its chardev refuses), and while it waits, reads no keys.
    console = {"raw": b"", "closed": False}
    lock = threading.Lock()

    def read_console():
        while data := sock.recv(65536):
            with lock:
                console["raw"] += data
        console["closed"] = True

    threading.Thread(target=read_console, daemon=True).start()
    start = 0  # where in the console's unescaped text the next wait looks
    for action in actions:
        kind, _, arg = action.partition(":")
        if kind == "wait":
            pattern = re.compile(arg.encode())
            while True:
                with lock:
                    text = ESCAPES.sub(b"", console["raw"]).replace(b"\r", b"")
                if match := pattern.search(text, start):
                    break
                if console["closed"]:
                    sys.exit(f"serial_keys: the console closed while waiting for '{arg}'")
                if time.monotonic() > deadline:
                    tail = text[start:].decode(errors="replace").splitlines()[-20:]
                    sys.exit(f"serial_keys: no '{arg}' on the console within {seconds:g} s; last lines:\n"
                             + "\n".join(tail))
                time.sleep(0.2)
            start = match.end()
        elif kind == "keys":
            for key in re.findall(r"\x1b\[[A-Z]|.", arg.encode().decode("unicode_escape"), re.S):
                sock.sendall(key.encode("latin-1"))
                time.sleep(0.1)
        elif kind == "sleep":
            time.sleep(float(arg))
        else:
            sys.exit(f"serial_keys: unknown action {action}")
        print(f"serial_keys: {kind} {arg!r} done", flush=True)
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()


if __name__ == "__main__":
    main()
