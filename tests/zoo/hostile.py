"""Hostile bots: each tries one way to hang, escape, exhaust or outlive the arena.

    hostile.py MODE TOKEN [N]

``TOKEN`` looks like ``86400.123456789012``: it is in the command line of every process the
bot makes (forked copies keep it; exec'd ones get it as a ``sleep`` duration), so a test can
find any survivor by scanning /proc, even one that cleared its environment. The bot plays
the first legal move, and misbehaves at its N-th request (default 1) or at start.
``ZOO_OUT``, when set, is a file where the bot writes what it measured (counts, errors).

Floods and stalls (each must end in timeout or oversized_line, within the deadline):
  blank_flood      streams empty lines for ever
  space_flood      streams lines of spaces and tabs for ever
  crlf_flood       streams "\\r\\n" for ever
  cr_flood         streams "\\r" for ever, never a newline
  partial_line     writes the start of a reply, never its end, and sleeps
  trickle          writes one byte every 20 ms, never a newline
  late_flood       misses request N (sleeps ZOO_SLOW_MS), then streams late replies to it
  hello_flood      answers hello with blank lines for ever
  stop_self        SIGSTOPs itself
  close_stdout     closes its stdout and lives on
Escapes (nothing may survive the match, the arena, or kill -9 of the arena):
  escape_daemon    double fork, setsid, empty environment, exec /bin/sh running sleeps
  escape_crash     the same, then crashes at request N
  escape_pgid      a child in a process group of its own that ignores SIGTERM
  respawner        a child that re-forks a sleeper whenever it dies, ignoring SIGTERM
  fork_bomb        forks ZOO_FORKS (default 1000) sleeping children, as many as it may,
                   after lifting its RLIMIT_NPROC where it can
Resources:
  memory_hog       from request N on, grows by ZOO_HOG_STEP_MB MB (default 128, written so
                   resident) after each answer, up to ZOO_HOG_MB (default 3500)
  memory_child     the same, but a child holds the memory: it grows a step before each answer
  cpu_hog          three child processes spin for ZOO_SPIN_S seconds (default 3), each
                   writing its own CPU time to ZOO_OUT.<i>; the bot plays on
  fd_hog           opens files until refused, writes the count
  big_file         makes ZOO_OUT.data ZOO_FILE_MB MB long (default 50; sparse past 4 MB), writes
                   how much it could
  big_file_die     the same with SIGXFSZ at its default action (a C program's case)
  network          connects to ZOO_CONNECT (host:port), writes "connected" or the error
  stderr_crash     writes ZOO_STDERR_KB KB (default 300) to stderr, then crashes at request N
  litter           at start, writes a 1 MB temporary file and writes its path to ZOO_OUT;
                   then hangs at request N (it is killed, and never cleans up)
Attacks on the arena's launcher (its parent; same user); a refused signal is reported to
ZOO_OUT and the bot plays on:
  kill_launcher    starts an in-tree child, then SIGKILLs its parent at request N
  stop_launcher    starts an in-tree child, then SIGSTOPs its parent at request N and plays on
Attacks on the other bots and the user's files (same user); each reports to ZOO_OUT what it
managed ("done ...") or the first refusal, and plays on:
  victim           plays well: the target of the attacks below (ZOO_VICTIM is in its command line)
  stop_opponent    at request N, SIGSTOPs every process whose command line holds ZOO_VICTIM
  read_opponent    at request N, reads the memory and the folder of such a process
  write_outside    at start, appends to the file ZOO_TARGET, then makes a file beside it
  read_secrets     at start, reads each path of ZOO_SECRETS (separated by os.pathsep; a folder
                   is listed and its files read), reporting a line per path, then makes a
                   temporary file (a last line says where)
"""

import json
import os
import resource
import signal
import socket
import sys
import tempfile
import time

MODE = sys.argv[1]
TOKEN = sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 1
OUT = os.environ.get("ZOO_OUT")


def send(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def report(text: str, suffix: str = "") -> None:
    if OUT:
        with open(OUT + suffix, "w") as f:
            f.write(text)


def raw(data: bytes) -> None:
    os.write(1, data)


def flood(piece: bytes) -> None:
    block = piece * max(1, 65536 // len(piece))
    while True:
        raw(block)


def sleep_forever() -> None:
    while True:
        time.sleep(1)


def escape(clear: bool = True) -> None:
    """Leave the bot's tree: fork, setsid, fork again; the grandchild execs a shell with an
    empty environment that runs two sleeps (the sleeps carry the token, nothing else does)."""
    if os.fork():
        time.sleep(0.2)  # give the escapee a moment; the bot then plays on
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.execve("/bin/sh", ["sh", "-c", f"sleep {TOKEN} & exec sleep {TOKEN}"], {} if clear else dict(os.environ))


def escape_pgid() -> None:
    """A child that stays in the tree but in a process group of its own, deaf to SIGTERM."""
    if os.fork() == 0:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sleep_forever()


def respawner() -> None:
    if os.fork():
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            sleep_forever()
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            time.sleep(0.01)


def fork_bomb() -> None:
    try:  # lift the limit first, where it may
        resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        pass
    made, error = 0, ""
    for _ in range(int(os.environ.get("ZOO_FORKS", "1000"))):
        try:
            pid = os.fork()
        except OSError as exc:
            error = str(exc)
            break
        if pid == 0:
            signal.pause()
            os._exit(0)
        made += 1
    report(f"{made} {error}")


_held: list[bytearray] = []


def grow() -> None:
    """One step more memory (each answer costs a step, so a loaded machine cannot turn the
    kill for memory into a timeout)."""
    step = int(os.environ.get("ZOO_HOG_STEP_MB", "128"))
    if len(_held) * step < int(os.environ.get("ZOO_HOG_MB", "3500")):
        _held.append(bytearray(b"\x01") * (step << 20))  # written, so resident
        report(f"{len(_held) * step}")


_child_pipes: tuple[int, int] = (-1, -1)


def memory_child() -> None:
    """A child that grows a step each time the bot asks it to, and says when it has."""
    global _child_pipes
    ask_r, ask_w = os.pipe()
    done_r, done_w = os.pipe()
    if os.fork() == 0:
        os.close(ask_w)
        os.close(done_r)
        while os.read(ask_r, 1):
            grow()
            os.write(done_w, b"x")
        os._exit(0)
    os.close(ask_r)
    os.close(done_w)
    _child_pipes = (ask_w, done_r)


def child_grows() -> None:
    ask_w, done_r = _child_pipes
    os.write(ask_w, b"x")
    if not os.read(done_r, 1):  # the child is gone (killed for memory): so will the bot be
        sleep_forever()


def cpu_hog() -> None:
    spin = float(os.environ.get("ZOO_SPIN_S", "3"))
    for i in range(3):
        if os.fork() == 0:
            end = time.monotonic() + spin
            while time.monotonic() < end:
                for _ in range(100000):
                    pass
                report(f"{time.process_time()}", f".{i}")
            os._exit(0)


def fd_hog() -> None:
    files = []
    try:
        while True:
            files.append(open(os.devnull))
    except OSError as exc:
        error = str(exc)
    for f in files:
        f.close()
    report(f"{len(files)} {error}")


def big_file(die: bool) -> None:
    if die:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    written = 0
    block = b"x" * (1 << 20)
    megabytes = int(os.environ.get("ZOO_FILE_MB", "50"))
    try:
        with open((OUT or "big") + ".data", "wb", buffering=0) as f:
            # A few megabytes written, then the last one far out (sparse): the size limit is
            # on the file's length, and nobody's disk fills up for the test.
            for _ in range(min(megabytes, 4)):
                written += f.write(block)
            if megabytes > 4:
                f.seek((megabytes - 1) << 20)
                written += f.write(block)
    except OSError as exc:
        report(f"{written} {exc}")
        return
    report(f"{written}")


def network() -> None:
    host, port = os.environ["ZOO_CONNECT"].rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            report("connected")
    except OSError as exc:
        report(f"refused {exc}")


def victims() -> list[int]:
    needle = os.environ["ZOO_VICTIM"].encode()
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read() and int(entry) != os.getpid():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def attempt(action) -> None:
    """Do ``action`` (it returns what it did) and report it, or report its refusal."""
    try:
        report(f"done {action()}")
    except OSError as exc:
        report(f"refused {exc}")


def stop_opponent() -> str:
    pids = victims()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    return f"stopped {pids}"


def read_opponent() -> str:
    pids = victims()
    for pid in pids:
        with open(f"/proc/{pid}/mem", "rb") as f:
            with open(f"/proc/{pid}/maps") as maps:
                start = next(int(line.split("-")[0], 16) for line in maps if line.split()[1].startswith("r"))
            f.seek(start)
            f.read(16)
        os.listdir(f"/proc/{pid}/cwd")
    return f"read {pids}"


def write_outside() -> str:
    target = os.environ["ZOO_TARGET"]
    with open(target, "a") as f:
        f.write("forged\n")
    with open(target + ".forged", "w") as f:
        f.write("forged\n")
    return f"wrote {target}"


def fail(exc: OSError) -> None:
    raise exc


def read_secrets() -> None:
    lines = []
    for path in os.environ["ZOO_SECRETS"].split(os.pathsep):
        try:
            if os.path.isdir(path):
                size = 0
                for top, _, names in os.walk(path, onerror=fail):
                    for name in names:
                        with open(os.path.join(top, name), "rb") as f:
                            size += len(f.read())
            else:
                with open(path, "rb") as f:
                    size = len(f.read())
            lines.append(f"{path}: read {size} bytes")
        except OSError as exc:
            lines.append(f"{path}: refused {exc.strerror}")
    try:
        fd, name = tempfile.mkstemp()
        os.close(fd)
        lines.append(f"temporary: made in {os.path.dirname(name)}")
    except OSError as exc:
        lines.append(f"temporary: refused {exc.strerror}")
    report("\n".join(lines) + "\n")


def at_start() -> None:
    if MODE in ("escape_daemon", "escape_crash"):
        escape()
    elif MODE in ("escape_pgid", "kill_launcher", "stop_launcher"):
        escape_pgid()
    elif MODE == "respawner":
        respawner()
    elif MODE == "fork_bomb":
        fork_bomb()
    elif MODE == "memory_child":
        memory_child()
    elif MODE == "cpu_hog":
        cpu_hog()
    elif MODE == "fd_hog":
        fd_hog()
    elif MODE in ("big_file", "big_file_die"):
        big_file(MODE == "big_file_die")
    elif MODE == "network":
        network()
    elif MODE == "stderr_crash":
        os.write(2, b"e" * (int(os.environ.get("ZOO_STDERR_KB", "300")) << 10))
    elif MODE == "write_outside":
        attempt(write_outside)
    elif MODE == "read_secrets":
        read_secrets()
    elif MODE == "litter":
        fd, name = tempfile.mkstemp()
        os.write(fd, b"x" * (1 << 20))
        report(name)


def misbehave(msg: dict) -> bool:
    """At the N-th request: do this mode's harm. True if the request is answered already."""
    if MODE == "blank_flood":
        flood(b"\n")
    if MODE == "space_flood":
        flood(b"   \t \n")
    if MODE == "crlf_flood":
        flood(b"\r\n")
    if MODE == "cr_flood":
        flood(b"\r")
    if MODE == "partial_line":
        raw(b'{"type":"move","id":')
        sleep_forever()
    if MODE == "trickle":
        while True:
            raw(b" ")
            time.sleep(0.02)
    if MODE == "late_flood":
        time.sleep(int(os.environ.get("ZOO_SLOW_MS", "1500")) / 1000)
        flood(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}).encode() + b"\n")
    if MODE == "litter":
        sleep_forever()
    if MODE == "stop_self":
        os.kill(os.getpid(), signal.SIGSTOP)
    if MODE == "close_stdout":
        os.close(1)
        sleep_forever()
    if MODE in ("escape_crash", "stderr_crash"):
        sys.exit(3)
    if MODE in ("kill_launcher", "stop_launcher"):
        # Says whom it hit: sealed, its parent is the first process of its own PID namespace.
        attempt(lambda: (os.kill(os.getppid(), signal.SIGKILL if MODE == "kill_launcher" else signal.SIGSTOP),
                         f"pid {os.getppid()}")[1])
    if MODE == "stop_opponent":
        attempt(stop_opponent)
    if MODE == "read_opponent":
        attempt(read_opponent)
    return False


def main() -> None:
    at_start()
    requests = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind in ("hello", "new_match"):
            if MODE == "hello_flood":
                flood(b"\n")
            send({"type": "ready", "name": f"hostile-{MODE}", "protocol": 1})
        elif kind == "goodbye":
            return
        elif kind == "request":
            requests += 1
            if requests == N and misbehave(msg):
                continue
            if requests >= N and MODE == "memory_child":
                child_grows()
            send({"type": "move", "id": msg["id"], "move": msg["legal"][0]})
            if requests >= N and MODE == "memory_hog":
                grow()


if __name__ == "__main__":
    main()
