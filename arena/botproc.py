"""Bot processes: spawn, talk lines with deadlines, capture stderr, and kill every descendant.

A bot is untrusted. Everything here is built so that no bot can hang, flood or outlive the
arena:

- each bot runs in its own session and process group, marked by a unique environment
  variable, with ``PR_SET_PDEATHSIG`` so it dies if the arena is killed with -9; a keeper
  process (one per arena) then kills whatever the bots started, found by that marker;
- the arena makes itself a child subreaper, so descendants that escape the group (``setsid``,
  double fork) are re-parented to it rather than to init and can be found and reaped;
- stdout is read non-blocking with ``poll`` on the raw fd, a line at most ``max_line_bytes``
  long: a 100 MB line is refused after the first chunk past the cap, never held in memory;
- stderr is drained continuously by a thread into a size-capped file (past the cap the bytes
  are read and dropped), so a flood neither blocks the bot nor fills the disk;
- every wait has a deadline on ``time.monotonic()``.

Failures are raised as ``BotFailure`` (a ``Termination`` plus a detail) for the referee to
record; nothing else escapes for anything a bot can do.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from arena.errors import ArenaError
from arena.protocol import (
    DEFAULT_MAX_LINE_BYTES,
    GOODBYE_LINE,
    BotFailure,
    MoveReply,
    Ready,
    Termination,
    TimeLimits,
    encode,
    parse_move,
    parse_ready,
    request_line,
    timeout_line,
)

ENV_TAG = "ESCOBA_ARENA_BOT"
_READ_CHUNK = 1 << 16
_SHELL_CHARS = set("|&;<>()$`*?~\n")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class BotSpecError(ArenaError, ValueError):
    """A bot's configuration is invalid (empty command, negative limit, unknown key...)."""


@dataclass(frozen=True)
class Limits:
    """Time and size limits for one bot. Times in milliseconds."""

    startup_ms: int = 10000
    move_ms: int = 2000
    bank_ms: int = 0
    grace_ms: int = 200
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    stderr_bytes: int = 1_000_000
    kill_grace_ms: int = 200

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise BotSpecError(f"{f.name}: expected an integer >= 0, got {value!r}")
        if self.max_line_bytes < 256:
            raise BotSpecError(f"max_line_bytes: expected at least 256, got {self.max_line_bytes}")

    @property
    def time(self) -> TimeLimits:
        return TimeLimits(self.startup_ms, self.move_ms, self.bank_ms, self.grace_ms)

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Limits:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BotSpecError(f"unknown limit {unknown[0]!r} (allowed: {', '.join(sorted(known))})")
        return cls(**{k: v for k, v in data.items() if v is not None})


def split_command(cmd: str | Sequence[str]) -> tuple[str, ...]:
    """The argv to execute. A string with shell syntax runs under ``/bin/sh -c``; a plain one
    is split like a shell would, so ``"./bot --fast"`` execs the bot itself (no shell between
    the arena and the bot)."""
    if isinstance(cmd, str):
        if not cmd.strip():
            raise BotSpecError("empty bot command")
        if _SHELL_CHARS & set(cmd):
            return ("/bin/sh", "-c", cmd)
        try:
            return tuple(shlex.split(cmd))
        except ValueError as exc:
            raise BotSpecError(f"cannot split bot command {cmd!r}: {exc}") from None
    argv = tuple(str(part) for part in cmd)
    if not argv or not argv[0]:
        raise BotSpecError("empty bot command")
    return argv


# Arguments with these endings name a program file for an interpreter (python3 bot.py, ...).
_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".pl", ".rb", ".java", ".jar", ".lua", ".tcl", ".php", ".sh")


def missing_program(cmd: str | tuple[str, ...], cwd: str, env: dict[str, str]) -> str | None:
    """Why ``cmd`` cannot start from ``cwd`` (its program, or the script it names, is not
    there), or None. A shell command line is left to the shell."""
    argv = split_command(cmd)
    if argv[:2] == ("/bin/sh", "-c"):
        return None
    program = argv[0]
    if os.sep in program:
        path = os.path.join(cwd, os.path.expanduser(program))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"expected a command that exists, but {path} is not an executable file"
    else:
        search = env.get("PATH", os.environ.get("PATH", os.defpath))
        if shutil.which(program, path=search) is None:
            return f"expected a command that exists, but {program!r} is not on the PATH"
    for arg in argv[1:]:
        if arg.endswith(_SOURCE_SUFFIXES) and not arg.startswith("-"):
            path = os.path.join(cwd, os.path.expanduser(arg))
            if not os.path.exists(path):
                return f"expected the bot's program file to exist, but {path} does not"
    return None



@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: a plain, picklable value the tournament code can pass around.

    ``cmd`` is an argv tuple or a command string (see ``split_command``); ``env`` adds to (or,
    with ``inherit_env=False``, replaces) the arena's environment.
    """

    name: str
    cmd: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    inherit_env: bool = True
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmd", split_command(self.cmd))
        env = self.env.items() if isinstance(self.env, Mapping) else self.env
        object.__setattr__(self, "env", tuple(sorted((str(k), str(v)) for k, v in env)))
        if not self.name:
            raise BotSpecError("a bot needs a name")

    @classmethod
    def from_command(cls, cmd: str | Sequence[str], name: str | None = None, **kwargs: Any) -> BotSpec:
        argv = split_command(cmd)
        if name is None:
            word = argv[-1].split()[0] if argv[:2] == ("/bin/sh", "-c") else argv[0]
            # "python3 bots/x.py" is better named after the script than the interpreter.
            if os.path.basename(word).startswith(("python", "perl", "node", "ruby")) and len(argv) > 1:
                word = argv[1]
            name = os.path.basename(word) or word
        return cls(name=name, cmd=argv, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "cmd": list(self.cmd), "cwd": self.cwd, "env": dict(self.env),
                "inherit_env": self.inherit_env, "limits": self.limits.to_dict()}


class ConversationLog:
    """Every line exchanged with bots: time, direction (``>>`` to the bot, ``<<`` from it),
    seat and pid. Long lines are cut so the log stays readable and bounded."""

    def __init__(self, sink: IO[str], max_chars: int = 2000) -> None:
        self._sink = sink
        self._max = max_chars
        self._t0 = time.monotonic()

    def write(self, direction: str, seat: int | None, pid: int | None, data: bytes | str) -> None:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        for line in text.splitlines() or [""]:
            if len(line) > self._max:
                line = f"{line[:self._max]}... [{len(line)} chars]"
            seat_text = "-" if seat is None else str(seat)
            self._sink.write(f"{time.monotonic() - self._t0:10.4f} seat {seat_text} pid {pid} {direction} {line}\n")

    def note(self, seat: int | None, pid: int | None, text: str) -> None:
        self.write("##", seat, pid, text)


# --- process-wide safety nets ---------------------------------------------------------------

_libc: Any = None
_subreaper_set = False
# Live bots, so that an arena exiting normally (even on an exception, or after dropping a
# BotProcess without closing it) leaves no process behind. Strong references on purpose.
_LIVE: set[BotProcess] = set()
_TAGS = itertools.count(1)


def _prctl(option: int, arg: int) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.prctl(option, arg, 0, 0, 0)


def _become_subreaper() -> None:
    global _subreaper_set
    if not _subreaper_set:
        _subreaper_set = True
        try:
            _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        except (OSError, AttributeError):  # not Linux: the group kill and /proc scan remain
            pass


# The keeper: a tiny process started once per arena process, holding the read end of a pipe
# that only the arena writes to. When the arena dies in any way (even SIGKILL, when nothing in
# it can run), the keeper reads EOF and kills every process still carrying this arena's
# environment marker: the bots' descendants, which PR_SET_PDEATHSIG does not cover.
_KEEPER_CODE = r"""
import os, signal, sys, time
prefix = ("%s=" % sys.argv[1] + sys.argv[2] + ".").encode()
me = os.getpid()
while sys.stdin.buffer.read(65536):
    pass
for sweep in range(20):
    found = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if any(item.startswith(prefix) for item in env):
            found += 1
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    if not found:
        break
    time.sleep(0.05)
"""
_keeper: subprocess.Popen[bytes] | None = None
_keeper_owner = 0


def _ensure_keeper() -> None:
    """Start this process's keeper (again in a forked child: the parent's is not ours)."""
    global _keeper, _keeper_owner
    if _keeper is not None and _keeper_owner == os.getpid() and _keeper.poll() is None:
        return
    try:
        _keeper = subprocess.Popen(
            [sys.executable, "-S", "-c", _KEEPER_CODE, ENV_TAG, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
        _keeper_owner = os.getpid()
    except OSError:  # without a keeper the other safety nets remain
        _keeper = None


def _child_setup_for(parent: int, cpus: frozenset[int] | None = None):
    prctl = _libc.prctl if _libc is not None else None
    sigkill = int(signal.SIGKILL)

    def setup() -> None:  # runs in the child between fork and exec: no locks taken
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
        if cpus:
            os.sched_setaffinity(0, cpus)
        if os.getppid() != parent:  # the arena died before prctl took effect
            os._exit(1)

    return setup


def _kill_all_live() -> None:
    for bot in list(_LIVE):
        bot.kill()


atexit.register(_kill_all_live)


# --- /proc ------------------------------------------------------------------------------------


def _proc_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, sid) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces or parentheses.
    rest = data[data.rfind(b")") + 2:].split()
    return rest[0].decode(), int(rest[1]), int(rest[2]), int(rest[3])


def _has_tag(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read().split(b"\0")
    except OSError:
        return False


def find_bot_processes(root: int, marker: bytes | None, root_alive: bool = True) -> set[int]:
    """Every live process that belongs to a bot: in its session or group, descended from its
    first process, or carrying its environment marker (which survives setsid and re-parenting).

    ``root_alive`` False: the first process has been reaped, so its pid may belong to someone
    else by now (a session or group id is never reused while a member lives, so those stay)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    stats: dict[int, tuple[str, int, int, int]] = {}
    for entry in entries:
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None and st[0] not in ("Z", "X"):
                stats[int(entry)] = st
    me = os.getpid()
    found = {pid for pid, (_, _, pgid, sid) in stats.items() if sid == root or pgid == root}
    if root_alive and root in stats:
        found.add(root)
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    stack = list(found)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    if marker is not None:
        for pid in stats:
            if pid not in found and pid != me and _has_tag(pid, marker):
                found.add(pid)
    found.discard(me)
    return found


def _reap(pids: set[int], timeout: float = 0.5) -> None:
    """Collect the exit status of adopted descendants (we are their subreaper) so they do not
    linger as zombies. Pids that are not our children are none of our business."""
    pending = set(pids)
    deadline = time.monotonic() + timeout
    while pending:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except OSError:  # not our child (ECHILD), or already collected
                pending.discard(pid)
                continue
            if done:
                pending.discard(pid)
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.002)


# --- stderr -----------------------------------------------------------------------------------


class _StderrPump(threading.Thread):
    """Drains a bot's stderr into a capped file, keeping a short tail in memory for reports."""

    def __init__(self, fd: int, path: Path | None, cap: int) -> None:
        super().__init__(daemon=True, name=f"stderr-{fd}")
        self._fd = fd
        self._path = path
        self._cap = cap
        self._halt = threading.Event()
        self.written = 0
        self.dropped = 0
        self.tail = b""

    def run(self) -> None:
        sink = open(self._path, "ab") if self._path is not None else None
        try:
            while not self._halt.is_set():
                ready, _, _ = select.select([self._fd], [], [], 0.2)
                if not ready:
                    continue
                try:
                    chunk = os.read(self._fd, _READ_CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self.tail = (self.tail + chunk)[-2048:]
                room = self._cap - self.written
                if room > 0 and sink is not None:
                    sink.write(chunk[:room])
                    sink.flush()
                keep = min(room, len(chunk)) if room > 0 else 0
                self.written += keep
                self.dropped += len(chunk) - keep
        finally:
            if sink is not None:
                if self.dropped:
                    sink.write(f"\n[arena: stderr cut at {self._cap} bytes, {self.dropped} more dropped]\n".encode())
                sink.close()

    def stop(self) -> None:
        self._halt.set()


# --- the bot process --------------------------------------------------------------------------


class BotProcess:
    """One running bot, reusable across matches and restarted after it dies.

    The referee drives it: ``send_hello`` and ``await_ready`` (or ``begin_match``) for the
    handshake, ``queue`` for events, ``decide`` for each move, ``flush`` at the end. Lines queued
    for the bot go out with the next write, so a decision costs one
    write and one read. Use it as a context manager, or call ``close()``; either way every
    process of the bot is gone afterwards.
    """

    def __init__(
        self,
        spec: BotSpec,
        *,
        stderr_dir: str | Path | None = None,
        log: ConversationLog | None = None,
        cpus: Sequence[int] | None = None,
    ) -> None:
        """``cpus``: pin the bot (and what it starts) to these CPUs. Pinning the arena and the
        bots of a match to one CPU makes each hand-over a local context switch instead of a
        cross-CPU wake-up, about twice as fast per decision on small VMs; but a bot then
        cannot use more than those CPUs. Off by default."""
        self.spec = spec
        self.cpus = frozenset(cpus) if cpus else None
        self.limits = spec.limits
        self.log = log
        self.seat: int | None = None
        self.ready_name: str | None = None
        self.starts = 0
        self.matches = 0  # matches begun on the current process
        self._stderr_dir = Path(stderr_dir) if stderr_dir is not None else None
        self._popen: subprocess.Popen[bytes] | None = None
        self._marker: bytes | None = None
        self._out_fd = -1
        self._in_fd = -1
        self._poll: select.poll | None = None
        self._pump: _StderrPump | None = None
        self._buf = bytearray()
        self._lines: deque[bytes] = deque()
        self._pending: list[bytes] = []
        self._next_id = 1
        self.last_request_id = 0
        self._abandoned: set[int] = set()
        self._hello_deadline = 0.0
        self._dead_reason: str | None = None
        self._killed = False
        self.exited_on_goodbye = False

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    @property
    def alive(self) -> bool:
        return self._popen is not None and self._dead_reason is None and self._popen.poll() is None

    @property
    def stderr_path(self) -> Path | None:
        if self._stderr_dir is None:
            return None
        return self._stderr_dir / f"{_safe(self.spec.name)}.stderr.log"

    @property
    def stderr_tail(self) -> str:
        return self._pump.tail.decode("utf-8", "replace") if self._pump is not None else ""

    def start(self) -> None:
        """Spawn the bot. Raises ``BotFailure(NO_HANDSHAKE)`` if it cannot be started."""
        if self._popen is not None:
            self.kill()
        _become_subreaper()
        _ensure_keeper()
        spec = self.spec
        env = dict(os.environ) if spec.inherit_env else {}
        env.update(spec.env)
        self._marker = f"{ENV_TAG}={os.getpid()}.{next(_TAGS)}.{time.monotonic_ns()}".encode()
        env[ENV_TAG] = self._marker.decode().split("=", 1)[1]
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        _prctl_ready()
        try:
            popen = subprocess.Popen(
                spec.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=spec.cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
                preexec_fn=_child_setup_for(os.getpid(), self.cpus),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self._popen = None
            raise BotFailure(Termination.NO_HANDSHAKE, f"cannot start {list(spec.cmd)!r}: {exc}") from None
        self._popen = popen
        self._killed = False
        self.starts += 1
        self.matches = 0
        self._dead_reason = None
        self._buf = bytearray()
        self._lines = deque()
        self._pending = []
        self._abandoned = set()
        self._in_fd = popen.stdin.fileno()  # type: ignore[union-attr]
        self._out_fd = popen.stdout.fileno()  # type: ignore[union-attr]
        os.set_blocking(self._in_fd, False)
        os.set_blocking(self._out_fd, False)
        self._poll = select.poll()
        self._poll.register(self._out_fd, select.POLLIN)
        self._pump = _StderrPump(popen.stderr.fileno(), self.stderr_path, self.limits.stderr_bytes)  # type: ignore[union-attr]
        self._pump.start()
        _LIVE.add(self)
        if self.log is not None:
            self.log.note(self.seat, popen.pid, f"started {spec.name}: {list(spec.cmd)!r}")

    def ensure_started(self) -> None:
        if not self.alive:
            self.start()

    def kill(self) -> None:
        """End the bot and every process it started: SIGTERM to all of them, a short grace,
        then SIGKILL until none is left. Idempotent; never raises for anything the bot did."""
        popen = self._popen
        if popen is None or self._killed:
            return
        if self._dead_reason is None:
            self._dead_reason = "killed"
        root = popen.pid
        marker = self._marker

        def find() -> set[int]:
            return find_bot_processes(root, marker, root_alive=popen.returncode is None)

        targets = find()
        seen = set(targets)
        if targets:
            _signal_all(root if popen.returncode is None else None, targets, signal.SIGTERM)
            deadline = time.monotonic() + self.limits.kill_grace_ms / 1000
            while time.monotonic() < deadline:
                popen.poll()
                targets = find()
                seen |= targets
                if not targets:
                    break
                time.sleep(0.005)
        for _ in range(200):  # bounded: a fork bomb must not keep the arena here forever
            popen.poll()
            targets = find()
            if not targets:
                break
            seen |= targets
            _signal_all(root if popen.returncode is None else None, targets, signal.SIGKILL)
            time.sleep(0.002)
        try:
            popen.wait(timeout=1.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
            pass
        seen.discard(root)
        _reap(seen)
        self._close_pipes()
        self._killed = True  # from now on the pids are not ours: never signal them again
        _LIVE.discard(self)

    def close(self) -> None:
        """Say goodbye, give the bot its grace to exit, then make sure everything is gone."""
        if self._popen is None or self._killed:
            return
        self.exited_on_goodbye = False
        if self.alive:
            try:
                self._write(b"".join(self._pending) + GOODBYE_LINE, time.monotonic() + self.limits.grace_ms / 1000)
            except BotFailure:
                pass
            self._pending = []
            try:
                self._popen.wait(timeout=max(self.limits.grace_ms, 100) / 1000)
                self.exited_on_goodbye = True
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _close_pipes(self) -> None:
        popen = self._popen
        if self._pump is not None:
            self._pump.stop()
            self._pump.join(timeout=1.0)
        if popen is not None:
            for stream in (popen.stdin, popen.stdout, popen.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
        self._poll = None

    def _gone(self, when: str) -> BotFailure:
        """The failure for a bot whose output ended: its exit status and last stderr words."""
        popen = self._popen
        code = None
        if popen is not None:
            try:
                code = popen.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                code = None
        if code is None:
            what = "closed its stdout"
        elif code < 0:
            what = f"was killed by signal {-code}"
        else:
            what = f"exited with code {code}"
        self._dead_reason = what
        tail = self.stderr_tail.strip().splitlines()[-3:]
        detail = " ".join(filter(None, ("bot", what, when))) + (f"; stderr ends: {' | '.join(tail)[-300:]}" if tail else "")
        return BotFailure(Termination.CRASH, detail)

    # -- lines -----------------------------------------------------------------------------

    def queue(self, line: bytes) -> None:
        """A line for the bot, sent with the next write (events need no reply)."""
        self._pending.append(line)

    def _write(self, data: bytes, deadline: float) -> None:
        if self._dead_reason is not None or self._popen is None:
            raise BotFailure(Termination.CRASH, f"bot is gone ({self._dead_reason or 'not started'})")
        if self.log is not None:
            self.log.write(">>", self.seat, self._popen.pid, data)
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._in_fd, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                raise self._gone("(its stdin is closed)") from None
            # The pipe is full: the bot is not reading. Wait for room, within the deadline.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotFailure(Termination.TIMEOUT, "bot stopped reading its input (pipe full)")
            _, ready, _ = select.select([], [self._in_fd], [], remaining)

    def _read_line(self, deadline: float) -> bytes:
        """The next line from the bot (without its newline), by ``deadline``."""
        lines = self._lines
        limit = self.limits.max_line_bytes
        while not lines:
            if self._dead_reason is not None or self._poll is None:
                raise BotFailure(Termination.CRASH, f"bot is gone ({self._dead_reason})")
            # Read first, poll only when nothing is there: the reply has often arrived by the
            # time the request's write returns, and that saves a system call per decision.
            try:
                chunk = os.read(self._out_fd, _READ_CHUNK)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BotFailure(Termination.TIMEOUT, "no reply before the deadline") from None
                self._poll.poll(remaining * 1000.0 + 0.5)
                continue
            except OSError as exc:
                raise self._gone(f"(read error {exc.errno})") from None
            if not chunk:
                raise self._gone("")
            buf = self._buf
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    break
                if buf:
                    buf += chunk[start:end]
                    line = bytes(buf)
                    buf.clear()
                else:
                    line = chunk[start:end]
                if len(line) > limit:
                    self._oversized(len(line))
                lines.append(line)
                start = end + 1
            if start < len(chunk):
                buf += chunk[start:]
                if len(buf) > limit:
                    self._oversized(len(buf), partial=True)
        return lines.popleft()

    def _oversized(self, size: int, partial: bool = False) -> None:
        self._buf = bytearray()
        self._lines.clear()
        self._dead_reason = "oversized line"
        more = "+ (unfinished)" if partial else ""
        raise BotFailure(Termination.OVERSIZED_LINE, f"line of {size}{more} bytes, the limit is {self.limits.max_line_bytes}")

    def _next_reply(self, deadline: float) -> bytes:
        while True:
            line = self._read_line(deadline)
            if self.log is not None:
                self.log.write("<<", self.seat, self.pid, line)
            if line.strip():
                return line

    # -- the protocol ----------------------------------------------------------------------

    def send_hello(self, hello: dict[str, Any]) -> None:
        """Start (or restart) the bot if needed and send the match start.

        ``hello`` is ``protocol.match_start(...)``; this picks ``hello`` (first match of the
        process) or ``new_match`` and the match number. Raises ``BotFailure(NO_HANDSHAKE)``.
        """
        self.ensure_started()
        first = self.matches == 0
        self.matches += 1
        message = dict(hello, type="hello" if first else "new_match", match=self.matches)
        self._hello_deadline = time.monotonic() + (self.limits.startup_ms + self.limits.grace_ms) / 1000
        try:
            self._write(b"".join(self._pending) + encode(message), self._hello_deadline)
        except BotFailure as exc:
            self.kill()
            raise BotFailure(Termination.NO_HANDSHAKE, exc.detail) from None
        finally:
            self._pending = []

    def await_ready(self) -> Ready:
        """Wait for ``ready`` (by the start-up deadline set by ``send_hello``)."""
        try:
            while True:
                line = self._next_reply(self._hello_deadline)
                if self._abandoned and b'"move"' in line:
                    # A late answer to a request that timed out in the last match.
                    try:
                        if parse_move(line).id in self._abandoned:
                            continue
                    except BotFailure:
                        pass
                ready = parse_ready(line)
                break
        except BotFailure as exc:
            detail = exc.detail
            if exc.termination is Termination.TIMEOUT:
                detail = f"no ready within {self.limits.startup_ms} ms (+{self.limits.grace_ms} ms grace)"
            self.kill()
            raise BotFailure(Termination.NO_HANDSHAKE, detail) from None
        self.ready_name = ready.name
        return ready

    def begin_match(self, hello: dict[str, Any]) -> Ready:
        """The whole handshake: ``send_hello`` then ``await_ready``."""
        self.send_hello(hello)
        return self.await_ready()

    def decide(
        self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int, idle: Callable[[], None] | None = None
    ) -> tuple[int, str, float]:
        """Send a request (after any queued lines) and wait for its reply; ``view`` is a dict
        or its JSON text. ``idle`` is called once the request is written, before waiting: the
        caller's bookkeeping then overlaps the bot's thinking.

        Returns (request id, move text, elapsed seconds). Only the reply's shape and id are
        checked here. A late reply to an abandoned (timed-out) request is skipped; any other
        id is ``wrong_id``. On timeout the request is abandoned.
        """
        request_id = self._next_id
        self._next_id += 1
        self.last_request_id = request_id
        time_ms = move_ms + bank_ms
        data = request_line(request_id, time_ms, bank_ms, view, legal)
        if self._pending:
            data = b"".join(self._pending) + data
            self._pending = []
        start = time.monotonic()
        deadline = start + (time_ms + self.limits.grace_ms) / 1000
        try:
            self._write(data, deadline)
            if idle is not None:
                idle()
            while True:
                reply: MoveReply = parse_move(self._next_reply(deadline))
                if reply.id == request_id:
                    return request_id, reply.move, time.monotonic() - start
                if reply.id in self._abandoned:
                    continue  # the late answer to a request that timed out: harmless
                raise BotFailure(Termination.WRONG_ID, f"reply id {reply.id}, expected {request_id} (move {reply.move!r})")
        except BotFailure as exc:
            if exc.termination is Termination.TIMEOUT:
                self._abandoned.add(request_id)
                raise BotFailure(
                    Termination.TIMEOUT, f"request {request_id}: no reply within {time_ms} ms (+{self.limits.grace_ms} ms grace)"
                ) from None
            if exc.termination.kills_bot:
                self.kill()
            raise

    def abandon(self, view: Any, legal: Sequence[str], move: str) -> int:
        """Send a request and give it up at once, telling the bot which move was played for it
        (what the arena does after a timeout under the substitute policy). For conformance
        checks: a correct bot carries on, and its reply to this id, if any, is ignored."""
        request_id = self._next_id
        self._next_id += 1
        self.last_request_id = request_id
        self._abandoned.add(request_id)
        data = b"".join(self._pending) + request_line(request_id, 0, 0, view, legal) + timeout_line(request_id, move)
        self._pending = []
        self._write(data, time.monotonic() + (self.limits.move_ms + self.limits.grace_ms) / 1000)
        return request_id

    def flush(self) -> None:
        """Send queued lines now (match_over); a bot that is gone or stuck just misses them."""
        if self._pending and self.alive:
            data = b"".join(self._pending)
            self._pending = []
            try:
                self._write(data, time.monotonic() + self.limits.grace_ms / 1000)
            except BotFailure:
                pass
        self._pending = []


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in name) or "bot"


def _prctl_ready() -> None:
    """Load libc in the parent, so the child only calls into it between fork and exec."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:  # pragma: no cover
            _libc = None


def _signal_all(root: int | None, pids: set[int], sig: int) -> None:
    """Signal the group ``root`` (None: the group's leader is reaped, its id may be reused, so
    only the listed pids) and every listed pid."""
    if root is not None:
        try:
            os.killpg(root, sig)
        except OSError:
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
