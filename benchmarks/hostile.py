"""Every hostile bot of the zoo in one tournament under the default limits: nothing lost,
nothing left running, the arena's own memory bounded.

    .venv/bin/python benchmarks/hostile.py [--concurrency 2] [--keep]

A gauntlet: an ordinary bot (bots/greedy_bot.py) plays every other entrant, two matches
each (duplicate deals): bots/random_bot.py, every mode of tests/zoo/hostile.py (floods,
stalls, escapes, a fork bomb, memory and CPU hogs, file and network probes, a stderr flood
that crashes every match, attacks on the launcher, a forger appending to this run's results
store, a spy reading its tournament file and results) and every mode of
tests/zoo/zoobot.py, all with the default time and resource limits (docs/PROTOCOL.md). It
is ``arena run`` as a user runs it, in a temporary folder. Afterwards:

- lost: scheduled matches missing from the store;
- survivors: processes still running, right after ``arena run`` exits, that carry the run's
  token in their command line (every process of tests/zoo/hostile.py does, even one that
  cleared its environment) or its tag in their environment (every process the arena
  started that kept its environment: workers, launchers, bots and their children);
- arena peak MB: the highest peak resident memory (VmHWM) of the arena's own processes (the
  ``arena run`` process and its workers; not the bots, not the launchers), sampled every 0.1 s.

Two more entrants attack the seal (arena/harness/seal.py): tests/zoo/sealed_probe.py tries,
before its handshake, every way out of its sandbox (this script's own processes, a TCP and a
UDP listener on loopback, an abstract and a path socket, a System V queue, a /dev/shm file,
the tournament's file, its results, an older results folder beside them, a file in the
home folder, the terminal) and leaves files and a System V segment behind; and
tests/zoo/twin_bot.py remembers every deal, to meet its twin.

One line per bot says how its matches ended; ``attacks:`` whether each attack that reports
(on the launcher, the store, the secrets, the seal, the twins; the fork bomb held to its task
limit) was refused; the last line is
``hostile: N bots, M matches, attacks tried T, refused R, lost 0, survivors 0, arena peak MB X``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.harness.containment import containment_line  # noqa: E402
from arena.harness.resources import ResourceLimits  # noqa: E402
from arena.tournament.config import load_config  # noqa: E402
from arena.tournament.schedule import build_schedule  # noqa: E402
from arena.tournament.store import ResultStore  # noqa: E402

HOSTILE = ROOT / "tests" / "zoo" / "hostile.py"
ZOOBOT = ROOT / "tests" / "zoo" / "zoobot.py"
HOSTILE_MODES = (
    "blank_flood", "space_flood", "crlf_flood", "cr_flood", "partial_line", "trickle", "late_flood", "hello_flood",
    "stop_self", "close_stdout", "escape_daemon", "escape_crash", "escape_pgid", "respawner", "fork_bomb",
    "memory_hog", "memory_child", "cpu_hog", "fd_hog", "big_file", "big_file_die", "network", "stderr_crash",
    "kill_launcher", "stop_launcher", "write_outside", "read_secrets",
)
# The attacks that report whether they were refused (tests/zoo/hostile.py), by mode.
REPORTING = ("kill_launcher", "stop_launcher", "write_outside", "read_secrets")
ZOOBOT_MODES = (
    ("hang_start", 1), ("exit_now", 1), ("hang_mid", 3), ("crash_mid", 3), ("garbage", 2), ("huge_line", 2),
    ("flood_stderr", 1), ("illegal", 2), ("stale_id", 2), ("orphan", 1), ("orphan_setsid", 1), ("orphan_crash", 2),
)
# What some modes need: a late flood that misses its deadline, a file over the default
# file_size_mb (1024), a port to knock at.
EXTRA_ENV = {
    "late_flood": {"ZOO_SLOW_MS": "2500"},
    "big_file": {"ZOO_FILE_MB": "1100"},
    "big_file_die": {"ZOO_FILE_MB": "1100"},
    "network": {"ZOO_CONNECT": "127.0.0.1:9"},
}
TAG_VAR = "ARENA_HOSTILE_TAG"


SEALED_PROBE = ROOT / "tests" / "zoo" / "sealed_probe.py"
TWIN_BOT = ROOT / "tests" / "zoo" / "twin_bot.py"


class Listeners:
    """What the machine offers that no bot may reach: loopback TCP and UDP, an abstract and a
    path socket, a System V queue, a file in /dev/shm; and a secret in the home folder."""

    def __init__(self, folder: Path, token: str) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind(f"\0escoba-hostile-{token}")
        self.abstract.listen()
        self.path = socket.socket(socket.AF_UNIX)
        self.path.bind(str(folder / "sock"))
        self.path.listen()
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.key = 0x5EA3_0000 + os.getpid() % 0xFFFF
        self.queue = self.libc.msgget(self.key, 0o1666)
        self.shm = Path(f"/dev/shm/escoba-hostile-{token}")
        self.shm.write_text("secret")
        self.home = Path.home() / f".escoba-hostile-{token}"
        self.home.write_text("secret")

    def targets(self, folder: Path, token: str) -> dict[str, object]:
        return {"pids": [os.getpid()], "tcp": [self.tcp.getsockname()[1]], "udp": [self.udp.getsockname()[1]],
                "abstract": [f"escoba-hostile-{token}"], "unix": [str(folder / "sock")], "msg_key": self.key,
                "shm": [self.shm.name],
                "files": [str(folder / "hostile.yaml"), str(folder / "results"), str(folder / "older"), str(self.home)],
                "leave": f"escoba-left-{token}", "leave_key": self.key + 1}

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.abstract, self.path):
            s.close()
        self.libc.msgctl(self.queue, 0, None)  # IPC_RMID
        self.shm.unlink(missing_ok=True)
        self.home.unlink(missing_ok=True)


def seal_outcomes(work: Path, token: str, key: int) -> list[tuple[str, bool]]:
    """(attack, refused) for each attack of the sealed probe and the twin bot."""
    out: list[tuple[str, bool]] = []
    try:
        report = json.loads((work / "reports" / "sealed-probe").read_text())
    except (OSError, ValueError):
        return [("sealed probe: no report", False)]
    for what, result in report.items():
        if what in ("pid", "uid"):
            continue
        out.append((f"{what}: {result}", result != "reached"))
    left = [path for path in (Path(f"/dev/shm/escoba-left-{token}"), Path(f"/tmp/escoba-left-{token}")) if path.exists()]
    out.append((f"files left behind: {len(left)}", not left))
    segment = ctypes.CDLL(None, use_errno=True).shmget(key, 0, 0)
    out.append(("System V segment left behind" if segment != -1 else "no System V segment left", segment == -1))
    for path in left:
        path.unlink()
    try:
        notes = (work / "reports" / "twin").read_text().split()
    except OSError:
        notes = []
    out.append((f"twins met: {notes.count('twin')} (deals dealt: {notes.count('dealt')})", "twin" not in notes))
    return out


def write_tournament(folder: Path, token: str, probe: dict[str, object] | None = None) -> Path:
    def bot(name: str, cmd: str, env: dict[str, str] | None = None) -> str:
        env_text = ", ".join(f"{k}: {v!r}" for k, v in (env or {}).items())
        # A bot writes its report (ZOO_OUT) in reports/: the one folder it is given besides its TMPDIR.
        reports = env and any(key in env for key in ("ZOO_OUT", "PROBE_OUT", "TWIN_OUT"))
        writable = f', limits: {{writable: ["{folder / "reports"}"]}}' if reports else ""
        return (f'  - {{name: {name}, cmd: "{cmd}", cwd: "{ROOT}"' + (f", env: {{{env_text}}}" if env_text else "")
                + writable + "}")

    lines = [bot("greedy", "$PYTHON bots/greedy_bot.py"), bot("random", "$PYTHON bots/random_bot.py")]
    # The attacks on files aim at this tournament's own file and results store.
    secrets_env = {"write_outside": {"ZOO_TARGET": str(folder / "results" / "results.sqlite")},
                   "read_secrets": {"ZOO_SECRETS": os.pathsep.join([str(folder / "hostile.yaml"), str(folder / "results")])}}
    (folder / "reports").mkdir()
    for mode in HOSTILE_MODES:
        env = {"ZOO_OUT": str(folder / "reports" / mode), **EXTRA_ENV.get(mode, {}), **secrets_env.get(mode, {})}
        lines.append(bot(mode.replace("_", "-"), f"$PYTHON {HOSTILE} {mode} {token} 2", env))
    for mode, n in ZOOBOT_MODES:
        lines.append(bot(f"zoo-{mode.replace('_', '-')}", f"$PYTHON {ZOOBOT} {mode} {n}"))
    if probe is not None:
        lines.append(bot("sealed-probe", f"$PYTHON {SEALED_PROBE}",
                         {"PROBE_OUT": str(folder / "reports" / "sealed-probe"),
                          "PROBE_TARGETS": json.dumps(probe)}))
        lines.append(bot("twin", f"$PYTHON {TWIN_BOT}", {"TWIN_OUT": str(folder / "reports" / "twin")}))
    text = "name: hostile\nseed: 11\nformat: gauntlet\nchallenger: greedy\nbots:\n" + "\n".join(lines) + "\n"
    path = folder / "hostile.yaml"
    path.write_text(text)
    return path


def survivors(token: str, tag: str, me: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        pid = int(entry)
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline or tag.encode() in environ:
            found.append(pid)
    return found


def arena_processes(main: int) -> list[int]:
    """The arena run process and its workers (its children other than launchers)."""
    pids = [main]
    try:
        with open(f"/proc/{main}/task/{main}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    for pid in kids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"launcher.py" not in f.read():
                    pids.append(pid)
        except OSError:
            pass
    return pids


def peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _attack_outcome(report: Path) -> str:
    """What a reporting attack's last report says: refused, or what it managed."""
    try:
        lines = report.read_text().splitlines()
    except OSError:
        return "no report"
    # A bot may make temporary files (in a TMPDIR of its own): read_secrets's last line says
    # it could, which is no attack.
    attacks = [line for line in lines if not line.startswith("temporary: made in ")]
    # Sealed, a bot's parent is the first process of its own PID namespace: signalling it
    # reaches nothing of the arena (the bot only stops or ends its own sandbox).
    refused = sum("refused" in line or line == "done pid 1" for line in attacks)
    if attacks and refused == len(attacks):
        return "refused"
    return f"NOT refused ({next((line for line in attacks if 'refused' not in line), 'no report')})"


def _fork_outcome(report: Path) -> tuple[str, bool]:
    """Whether the fork bomb was held to its task limit (the default ``processes``, 512 tasks, of
    which the bot is one): by the pids cgroup, or by RLIMIT_NPROC in its own user namespace."""
    limit = ResourceLimits().processes
    try:
        made = int(report.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return "fork_bomb: no report", False
    held = made < limit
    return f"fork_bomb {'held' if held else 'NOT held'} ({made} children, limit {limit} tasks)", held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the results folder (its path is printed)")
    args = parser.parse_args()
    token = f"86400.{secrets.randbelow(10**12):012d}"
    tag = f"{TAG_VAR}={token}"
    work = Path(tempfile.mkdtemp(prefix="arena-hostile-"))
    listeners = Listeners(work, token)
    try:
        # An older results folder of the same tournament, beside the new one.
        (work / "older").mkdir()
        (work / "older" / "results.sqlite").write_text("the deals of an older run")
        path = write_tournament(work, token, listeners.targets(work, token))
        config = load_config(path)
        schedule_ids = sorted(spec.id for spec in build_schedule(config))
        output = work / "results"
        print(f"containment: {containment_line()}")
        print(f"{len(config.bots)} bots, {len(schedule_ids)} matches, concurrency {args.concurrency}; "
              f"load average {open('/proc/loadavg').read().split()[0]}")
        env = dict(os.environ, **{TAG_VAR: token})
        start = time.monotonic()
        run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress", "--output",
                                str(output), "--concurrency", str(args.concurrency)],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = 0
        while run.poll() is None:
            for pid in arena_processes(run.pid):
                peak = max(peak, peak_kb(pid))
            time.sleep(0.1)
        out, err = run.communicate()
        left = survivors(token, tag, os.getpid())
        took = time.monotonic() - start
        if run.returncode != 0:
            print(f"arena run exited {run.returncode}:\n{out[-2000:]}\n{err[-2000:]}", file=sys.stderr)
        with ResultStore.open_existing(str(output)) as store:
            rows = store.results()
        stored = {row.id for row in rows}
        lost = len(set(schedule_ids) - stored)
        ended: dict[str, Counter[str]] = {}
        for row in rows:
            for bot, termination in zip(row.seats, row.terminations, strict=True):
                ended.setdefault(bot, Counter())[termination] += 1
        for bot in config.bots:
            tally = ", ".join(f"{k} {v}" for k, v in sorted(ended.get(bot.name, Counter()).items()))
            print(f"  {bot.name:20} {tally}")
        if left:
            print(f"survivors: {left}")
        outcomes = [(f"{mode} {_attack_outcome(work / 'reports' / mode)}", _attack_outcome(work / "reports" / mode)
                     == "refused") for mode in REPORTING]
        outcomes.append(_fork_outcome(work / "reports" / "fork_bomb"))
        outcomes += seal_outcomes(work, token, listeners.key + 1)
        print("attacks: " + "; ".join(text for text, _ in outcomes))
        refused = sum(ok for _, ok in outcomes)
        print(f"run took {took:.0f} s (exit {run.returncode}); load average {open('/proc/loadavg').read().split()[0]}")
        if args.keep:
            print(f"results: {output}")
        print(f"hostile: {len(config.bots)} bots, {len(schedule_ids)} matches, attacks tried {len(outcomes)}, "
              f"refused {refused}, lost {lost}, survivors {len(left)}, arena peak MB {peak / 1024:.1f}")
        return 0 if run.returncode == 0 and lost == 0 and not left and refused == len(outcomes) else 1
    finally:
        listeners.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
