"""A zoo of bots, good and bad, for the harness tests: ``zoobot.py MODE [N]``.

Every mode speaks protocol 1 correctly except for its one misbehaviour. With ``ZOO_PIDFILE``
set, every process the bot starts appends its pid there, so tests can check none survives.

Modes:
  good            plays the first legal move
  hang_start      sleeps before the handshake, forever
  hang_mid        plays N moves, then stops answering (and reading)
  slow_once       sleeps ZOO_SLOW_MS (default 1000) before its N-th answer, else good
  crash_mid       plays N moves, then exits with code 3
  exit_now        exits at once, before reading anything
  garbage         answers its N-th request with a line that is not JSON
  huge_line       answers its N-th request with a 100 MB line (written in 1 MB pieces)
  flood_stderr    writes ZOO_FLOOD_MB (default 50) MB to stderr at start, then plays well
  illegal         answers its N-th request with a move that is not legal
  stale_id        answers its N-th request with the previous request's id
  orphan          starts a child that ignores SIGTERM and sleeps, then plays well
  orphan_setsid   same, but the child escapes: double fork and setsid
  orphan_crash    starts such an escaped child, then crashes after N moves
"""

import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def note_pid(pid: int) -> None:
    # With its PID namespace: a sealed bot's pids mean something only beside it (helpers.pids_in);
    # and with its start time, which tells it from a later process of the same pid and namespace
    # number (a dead namespace's number is soon another's).
    path = os.environ.get("ZOO_PIDFILE")
    if path:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            start = stat.read().rsplit(b")", 1)[1].split()[19].decode()
        with open(path, "a") as f:
            f.write(f"{pid} {os.readlink('/proc/self/ns/pid')} {start}\n")


def send(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stubborn_child(escape: bool) -> None:
    """A process that ignores SIGTERM and would run for ever."""
    code = (
        "import os, signal, time, sys\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"escape = {escape!r}\n"
        "path = os.environ.get('ZOO_PIDFILE')\n"
        "if escape:\n"
        "    r, w = os.pipe()\n"
        "    if os.fork():\n"
        "        os.read(r, 1)\n"
        "        os._exit(0)\n"
        "    os.setsid()\n"
        "    child = os.fork()\n"
        "    if child:\n"
        "        # Noted by its parent, before it is orphaned (which gets it killed at once).\n"
        "        if path:\n"
        "            start = open(f'/proc/{child}/stat', 'rb').read().rsplit(b')', 1)[1].split()[19].decode()\n"
        "            open(path, 'a').write(f'{child} {os.readlink(\"/proc/self/ns/pid\")} {start}\\n')\n"
        "        os.write(w, b'x')\n"
        "        os._exit(0)\n"
        "elif path:\n"
        "    start = open('/proc/self/stat', 'rb').read().rsplit(b')', 1)[1].split()[19].decode()\n"
        "    open(path, 'a').write(f'{os.getpid()} {os.readlink(\"/proc/self/ns/pid\")} {start}\\n')\n"
        "for fd in (0, 1):\n"
        "    os.close(fd)\n"
        "while True:\n"
        "    time.sleep(1)\n"
    )
    # stderr is kept open on purpose: the child holds the bot's stderr pipe.
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    if escape:
        proc.wait()  # the intermediate exits at once; the grandchild is re-parented
    else:
        note_pid(proc.pid)
    time.sleep(0.3)  # let the child get going (and write its pid) before play starts


def main() -> None:
    note_pid(os.getpid())
    if MODE == "exit_now":
        sys.exit(0)
    if MODE == "hang_start":
        while True:
            time.sleep(1)
    if MODE == "flood_stderr":
        block = b"flood " * (1 << 17)  # 768 KB
        total = int(os.environ.get("ZOO_FLOOD_MB", "50")) << 20
        written = 0
        while written < total:
            os.write(2, block)
            written += len(block)
    if MODE in ("orphan", "orphan_setsid", "orphan_crash"):
        stubborn_child(escape=MODE != "orphan")
    requests = 0
    last_id = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind in ("hello", "new_match"):
            send({"type": "ready", "name": f"zoo-{MODE}", "protocol": 1})
            continue
        if kind == "goodbye":
            return
        if kind != "request":
            continue
        requests += 1
        rid, move = msg["id"], msg["legal"][0]
        if requests == N + 1 and MODE in ("hang_mid",):
            while True:
                time.sleep(1)
        if requests == N + 1 and MODE in ("crash_mid", "orphan_crash"):
            sys.stderr.write("zoo: crashing on purpose\n")
            sys.exit(3)
        if requests == N:
            if MODE == "slow_once":
                time.sleep(int(os.environ.get("ZOO_SLOW_MS", "1000")) / 1000)
            elif MODE == "garbage":
                sys.stdout.write("I think I will play the seven\n")
                sys.stdout.flush()
                continue
            elif MODE == "huge_line":
                piece = "x" * (1 << 20)
                for _ in range(100):
                    sys.stdout.write(piece)
                sys.stdout.write("\n")
                sys.stdout.flush()
                continue
            elif MODE == "illegal":
                legal = set(msg["legal"])
                move = next(c for c in ("1o", "1c", "1e", "1b", "2o", "2c") if c not in legal)
            elif MODE == "stale_id" and last_id is not None:
                rid = last_id
        last_id = msg["id"]
        send({"type": "move", "id": rid, "move": move})


if __name__ == "__main__":
    main()
