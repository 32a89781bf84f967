"""A hostile bot that tries, before it says hello, every way out of its sandbox that the arena
promises to close (docs/PROTOCOL.md, "Limits and containment"), and writes what it reached.

``PROBE_TARGETS`` (JSON) names what to try: ``pids`` (processes outside: the arena, the
launcher, another bot) to signal, renice, re-limit, re-pin and re-schedule; ``tcp``/``udp``
ports on loopback; ``abstract``/``unix`` socket names; a System V ``msg_key``; ``shm`` (a
file in ``/dev/shm``); ``files`` to read (secrets); ``leave`` (a marker to leave behind in
``/dev/shm``, ``/tmp`` and a System V segment). The report, one JSON object, goes to the
file ``PROBE_OUT`` names (the one folder the test grants it): ``{what: "reached" | error}``.
Then it plays as a bot that always plays its first legal move.
"""

import ctypes
import errno
import json
import os
import resource
import socket
import sys


def attempt(report, key, action):
    try:
        action()
        report[key] = "reached"
    except OSError as exc:
        report[key] = errno.errorcode.get(exc.errno or 0, str(exc))
    except Exception as exc:  # noqa: BLE001 - anything but success is a refusal
        report[key] = type(exc).__name__


def probe(targets):
    report = {}
    libc = ctypes.CDLL(None, use_errno=True)
    for pid in targets.get("pids", ()):
        attempt(report, f"kill {pid}", lambda pid=pid: os.kill(pid, 0))
        attempt(report, f"setpriority {pid}", lambda pid=pid: os.setpriority(os.PRIO_PROCESS, pid, 19))
        attempt(report, f"prlimit {pid}", lambda pid=pid: resource.prlimit(pid, resource.RLIMIT_NOFILE))
        attempt(report, f"affinity {pid}", lambda pid=pid: os.sched_setaffinity(pid, {0}))
        attempt(report, f"scheduler {pid}", lambda pid=pid: os.sched_setscheduler(pid, os.SCHED_BATCH, os.sched_param(0)))
    for port in targets.get("tcp", ()):
        attempt(report, f"tcp {port}", lambda port=port: socket.create_connection(("127.0.0.1", port), timeout=1))

    def udp(port):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1)
        s.sendto(b"x", ("127.0.0.1", port))
        s.recvfrom(16)  # the listener echoes

    for port in targets.get("udp", ()):
        attempt(report, f"udp {port}", lambda port=port: udp(port))
    for name in targets.get("abstract", ()):
        attempt(report, f"abstract {name}", lambda name=name: socket.socket(socket.AF_UNIX).connect("\0" + name))
    for path in targets.get("unix", ()):
        attempt(report, f"unix {path}", lambda path=path: socket.socket(socket.AF_UNIX).connect(path))
    if "msg_key" in targets:
        def msgget():
            if libc.msgget(targets["msg_key"], 0) < 0:
                raise OSError(ctypes.get_errno(), "msgget")
        attempt(report, "msgget", msgget)
    for name in targets.get("shm", ()):
        attempt(report, f"shm {name}", lambda name=name: open(f"/dev/shm/{name}").read())
    for path in targets.get("files", ()):
        def read(path=path):
            if os.path.isdir(path):
                if not os.listdir(path):
                    raise FileNotFoundError(errno.ENOENT, "empty")
            elif not open(path, "rb").read():
                raise FileNotFoundError(errno.ENOENT, "empty")
        attempt(report, f"file {path}", read)
    attempt(report, "tty", lambda: open("/dev/tty", "w"))
    if "leave" in targets:
        marker = targets["leave"]
        open(f"/dev/shm/{marker}", "w").write("left")
        open(f"/tmp/{marker}", "w").write("left")
        key = int(targets.get("leave_key", 0))
        if key:
            libc.shmget(key, 4096, 0o1666)  # IPC_CREAT | 0666
    report["pid"] = os.getpid()
    report["uid"] = os.getuid()
    return report


def main():
    targets = json.loads(os.environ.get("PROBE_TARGETS", "{}"))
    report = probe(targets)
    with open(os.environ["PROBE_OUT"], "w") as f:
        json.dump(report, f)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") == "hello":
            print(json.dumps({"type": "ready", "name": "probe", "protocol": 1}), flush=True)
        elif msg.get("type") == "request":
            print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
        elif msg.get("type") == "goodbye":
            return


if __name__ == "__main__":
    main()
