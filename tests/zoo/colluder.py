"""Two colluders at one table try to tell each other their hands, through every channel two
processes of one machine could share. ``COLLUDE_ROLE=offer`` leaves word everywhere: a file in
/dev/shm and in /tmp, an abstract and a path Unix socket and a loopback TCP port that listen,
a System V message queue. ``COLLUDE_ROLE=listen`` looks for that word at every request and
notes ``contact CHANNEL`` in the file ``COLLUDE_OUT`` names when it finds any, and ``tried N``
after each look. ``COLLUDE_KEY`` (a number) names the meeting place. Both play their first
legal move.
"""

import ctypes
import json
import os
import socket
import sys

KEY = int(os.environ["COLLUDE_KEY"])
ROLE = os.environ["COLLUDE_ROLE"]
OUT = os.environ.get("COLLUDE_OUT")
LIBC = ctypes.CDLL(None, use_errno=True)
FILES = (f"/dev/shm/collude-{KEY}", f"/tmp/collude-{KEY}")
SOCKETS = (("abstract", socket.AF_UNIX, f"\0collude-{KEY}"), ("unix", socket.AF_UNIX, f"/tmp/collude-{KEY}.sock"),
           ("tcp", socket.AF_INET, ("127.0.0.1", 20000 + KEY % 20000)))


def offer():
    kept = []
    for path in FILES:
        try:
            with open(path, "w") as f:
                f.write("my hand: ...\n")
        except OSError:
            pass
    for _, family, address in SOCKETS:
        try:
            s = socket.socket(family)
            s.bind(address)
            s.listen()
            kept.append(s)
        except OSError:
            pass
    LIBC.msgget(KEY, 0o1666)  # IPC_CREAT | 0666
    return kept


def look():
    found = [path for path in FILES if os.path.exists(path)]
    for name, family, address in SOCKETS:
        s = socket.socket(family)
        s.settimeout(0.2)
        try:
            s.connect(address)
            found.append(name)
        except OSError:
            pass
        finally:
            s.close()
    if LIBC.msgget(KEY, 0) >= 0:
        found.append("msgget")
    return found


def main():
    kept = offer() if ROLE == "offer" else []
    tried = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] in ("hello", "new_match"):
            print(json.dumps({"type": "ready", "name": f"colluder-{ROLE}", "protocol": 1}), flush=True)
        elif msg["type"] == "request":
            if ROLE == "listen" and OUT:
                tried += 1
                with open(OUT, "a") as f:
                    for channel in look():
                        f.write(f"contact {channel}\n")
                    f.write(f"tried {tried}\n")
            print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
        elif msg["type"] == "goodbye":
            break
    for s in kept:
        s.close()


if __name__ == "__main__":
    main()
