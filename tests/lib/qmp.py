"""qmp.py — a QMP client for the test scripts: the monitor QEMU opens with
-qmp unix:SOCKET,server=on,wait=off, spoken one JSON line at a time."""
import json
import os
import socket
import time


def qemu_alive():
    """False once the QEMU named by QEMU_PID in the environment is gone (True without QEMU_PID)."""
    pid = os.environ.get("QEMU_PID")
    if not pid:
        return True
    try:
        os.kill(int(pid), 0)
        return True
    except OSError:
        return False


class Qmp:
    """Connects (retrying until DEADLINE, a time.monotonic() value, while QEMU lives) and leaves
    the capabilities negotiation done."""

    def __init__(self, path, deadline):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline or not qemu_alive():
                    raise
                time.sleep(0.1)
        self.file = self.sock.makefile("rwb")
        self.read_reply()  # the greeting
        self.command("qmp_capabilities")

    def read_reply(self):
        while True:
            line = self.file.readline()
            if not line:
                raise EOFError("QMP connection closed")
            msg = json.loads(line)
            if "event" not in msg:  # events (SHUTDOWN, STOP, ...) are not replies
                return msg

    def command(self, name, **args):
        self.file.write(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        self.file.flush()
        reply = self.read_reply()
        if "error" in reply:
            raise RuntimeError(f"{name}: {reply['error']}")
        return reply.get("return")

    def human(self, command_line):
        """An HMP command's text (info registers, x/...), which QMP has no command of its own for."""
        return self.command("human-monitor-command", **{"command-line": command_line})
