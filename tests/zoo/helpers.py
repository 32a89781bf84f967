"""Shared helpers for the harness tests: specs for the zoo and fake bots, the C bot build."""

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from arena.harness.botproc import BotSpec, Limits
from arena.harness.protocol import match_start
from arena.harness.resources import ResourceLimits

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ZOO = HERE / "zoobot.py"
FAKE = HERE / "fakebot.py"
HOSTILE = HERE / "hostile.py"

# Limits for bots expected to behave: generous, so that a loaded 2-core machine never turns a
# good move into a timeout. Tests that wait for a timeout pass shorter limits explicitly.
FAST = Limits(startup_ms=10000, move_ms=1000, grace_ms=200, kill_grace_ms=100)


# Files the test bots write for their tests to read (reports, pid files, transcripts).
REPORT_FILES = ("ZOO_OUT", "ZOO_PIDFILE", "ZOO_TRANSCRIPT", "ZOO_SCRIPT_LEFT")


def reporting(env: dict | None, resources: ResourceLimits | None = None) -> ResourceLimits:
    """``resources`` whose ``writable`` also holds the folders of the files the bot reports to:
    with Landlock, a bot may otherwise write only in its own TMPDIR, which goes with it."""
    resources = resources or ResourceLimits()
    folders = tuple(os.path.dirname(os.path.abspath(env[key])) for key in REPORT_FILES if env and env.get(key))
    return replace(resources, writable=resources.writable + folders) if folders else resources


def zoo_spec(mode: str, n: int = 1, limits: Limits = FAST, env: dict | None = None, name: str | None = None) -> BotSpec:
    return BotSpec(name=name or f"zoo-{mode}", cmd=(sys.executable, str(ZOO), mode, str(n)), limits=limits,
                   env=env or {}, resources=reporting(env))


def new_token() -> str:
    """A marker for one test's hostile processes: also a valid ``sleep`` duration."""
    return f"86400.{secrets.randbelow(10**12):012d}"


def hostile_spec(mode: str, token: str, n: int = 1, limits: Limits = FAST, env: dict | None = None,
                 resources: ResourceLimits | None = None, name: str | None = None) -> BotSpec:
    return BotSpec(name=name or f"hostile-{mode}", cmd=(sys.executable, str(HOSTILE), mode, token, str(n)),
                   limits=limits, env=env or {}, resources=reporting(env, resources))


def survivors(token: str) -> list[int]:
    """Every running process whose command line carries ``token`` (see hostile.py)."""
    found = []
    needle = token.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if needle in cmdline and running(int(entry)):
            found.append(int(entry))
    return found


def with_environ(entry: str, exclude: int | None = None) -> list[int]:
    """Every running process whose environment holds ``entry`` (``NAME=value``): the arena's
    workers, launchers, bots and their children inherit what the test put in its environment,
    sealed or not (a sealed bot's pids mean nothing outside its namespace)."""
    found = []
    needle = entry.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (os.getpid(), exclude):
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0") and running(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


def wait_until(condition, timeout: float = 20.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes (generous: the machine is shared)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# The scripted bots made by the test running now, with the file each reports its steps left to
# (tests/conftest.py checks them when the test ends).
SCRIPTS: list[tuple[Path, list, bool]] = []  # (report, steps, whether every step must be reached)


def fake_spec(steps: list, limits: Limits = FAST, env: dict | None = None, *, steps_may_be_left: bool = False) -> BotSpec:
    """A scripted bot (fakebot.py). Unless ``steps_may_be_left``, the test fails when it ends
    with a step of the script not reached (``assert_done``), as python-chess's mock engine
    does: a script that is not played through did not test what it says."""
    left = Path(tempfile.mkdtemp(prefix="fakebot-")) / "steps-left.json"
    env = {**(env or {}), "ZOO_SCRIPT_LEFT": str(left)}
    spec = BotSpec(name="fake", cmd=(sys.executable, str(FAKE), json.dumps(steps)), limits=limits, env=env,
                   resources=reporting(env))
    SCRIPTS.append((left, steps, not steps_may_be_left))
    return spec


def steps_left(report: Path, steps: list) -> list:
    """The steps of a scripted bot's script (``steps``, reported to ``report``) it has not
    reached: all of them if it never ran."""
    return json.loads(report.read_text()) if report.exists() else list(steps)


def assert_done(report: Path, steps: list) -> None:
    left = steps_left(report, steps)
    if left:
        raise AssertionError(f"the scripted bot ended with {len(left)} of its {len(steps)} steps not reached: "
                             f"{json.dumps(left)[:300]}")


def hello(seat: int = 0, limits: Limits = FAST) -> dict:
    return match_start(first=True, match=0, seat=seat, side=seat, players=2, teams=((0,), (1,)),
                       rules={"target": 21}, time=limits.time, max_line_bytes=limits.max_line_bytes)


def running(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


def pids_in(path: Path) -> list[int]:
    """The pids a bot noted (``pid``, ``pid pid-namespace`` or ``pid pid-namespace start-time``
    a line), as this process sees them: a sealed bot's own pids are those of its PID namespace.
    One whose process is gone maps to its negative (no process runs it); so does one whose pid
    (and namespace number: a dead namespace's is soon another's) now names a process started
    at another time than the one noted."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        pid, ns, start = (line.split() + ["", ""])[:3]
        if ns and ns != os.readlink("/proc/self/ns/pid"):
            found.append(host_pid(int(pid), ns, start))
        else:
            found.append(int(pid) if not start or _start_time(int(pid)) == start else -int(pid))
    return found


def _start_time(pid: int) -> str | None:
    """When the process ``pid`` started (/proc/PID/stat's 22nd field), or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def host_pid(inner: int, ns: str, start: str = "") -> int:
    """The pid, here, of the process ``inner`` of the PID namespace ``ns`` (``pid:[N]``) that
    started at ``start`` (if given)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != ns:
                continue
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                        return int(entry) if not start or _start_time(int(entry)) == start else -inner
        except (OSError, ValueError):
            continue
    return -inner


def sealed() -> bool:
    """Bots run sealed here (arena.harness.seal): each in a PID namespace of its own, where an
    escaped child stays in its bot's namespace until the bot ends, instead of being an orphan."""
    from arena.harness import containment

    return containment.launcher().sealed


def firstmove_bin() -> Path:
    """bots/c/firstmove.bin, compiled on demand (it is gitignored)."""
    src = ROOT / "bots" / "c" / "firstmove.c"
    out = ROOT / "bots" / "c" / "firstmove.bin"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        subprocess.run(["cc", "-O2", "-o", str(tmp), str(src)], check=True)
        os.replace(tmp, out)
    return out
