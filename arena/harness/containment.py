"""Containment, the arena's side: the launcher that starts every bot of this process.

Each arena process (the CLI, each tournament worker) has one launcher (``arena.harness.launcher``), a
small program it starts on first need and talks to over a Unix socket. The launcher starts
the bots, is their subreaper, keeps them in cgroups where it can, measures and limits them,
and kills whatever is left when this process ends, even by ``kill -9``. Nothing here is on a
decision's path: the arena talks to its bots through their pipes directly; the launcher is
asked only to start, kill and measure (and where a bot's cgroups count what it uses, the arena
reads those counters itself at a match's start and end: see ``Child``).

``containment_line()`` says in one line what is in force on this machine, for a run header.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from arena.errors import ArenaError, ExitCode
from arena.harness import cgroups, proctree, sandbox, seal
from arena.harness import launcher as launcher_program
from arena.harness.proctree import TreeClock
from arena.harness.protocol import Clock
from arena.harness.resources import ResourceLimits, Usage
from arena.harness.sandbox import LANDLOCK_ENV
from arena.harness.scratch import sweep_once

# Set to "off" to run bots without cgroups (what a machine without them gets): for tests
# and for comparing the two.
CGROUPS_ENV = "ESCOBA_ARENA_CGROUPS"
_START_TIMEOUT = 30.0  # a loaded machine may take seconds to start a Python
_REPLY_TIMEOUT = 10.0
_SEND_TIMEOUT = 5.0
# No heartbeat for this long: the launcher is stuck (it never blocks longer than a start's exec).
_SILENCE_S = 15 * launcher_program.BEAT_S


# How long a lost launcher's orphans may take to come to this process, once none is left.
_ORPHANS_QUIET_S = 0.3
_ORPHANS_MAX_S = 3.0
_subreaper_of = 0  # the pid of the process that made itself a subreaper (0: none yet)
# This process's launchers, never taken for an orphan (a new one leads a session of its own).
_launchers: weakref.WeakSet[LauncherClient] = weakref.WeakSet()


def _become_subreaper() -> bool:
    """Make this process a child subreaper (Linux), once: where bots have no cgroup and no
    PID namespace of their own, what they leave when their launcher is killed then comes to
    this process, not to init, and ``_kill_orphans`` can still reach it."""
    global _subreaper_of
    if _subreaper_of == os.getpid():
        return True
    if not sandbox.become_subreaper():
        return False
    _subreaper_of = os.getpid()
    return True


def _kill_orphans(sessions: set[int]) -> None:
    """Kill, with all their descendants, this process's children that belong to one of
    ``sessions`` (a lost launcher's bots: each is the leader of a session of its own), and reap
    them. They are the orphans a killed launcher's bots left, re-parented here because this
    process is their subreaper; a descendant that made a session of its own is out of reach.
    Sweeps until none has come for a moment: the bots die by their parent-death signal, and
    their orphans come here as they do."""
    if _subreaper_of != os.getpid() or not sessions:
        return
    me = os.getpid()
    start = last = time.monotonic()
    while True:
        now = time.monotonic()
        ours = {launcher._proc.pid for launcher in list(_launchers)}
        found = []
        for pid in proctree.children(me):
            fields = proctree.stat_fields(pid)
            if fields is not None and len(fields) > 3 and int(fields[3]) in sessions and pid not in ours:
                found.append(pid)
        if found:
            last = now
            doomed = proctree.tree(found)
            proctree.signal_all(doomed, signal.SIGKILL)
            for pid in found:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
        elif now - last >= _ORPHANS_QUIET_S or now - start >= _ORPHANS_MAX_S:
            return
        time.sleep(0.02)


class LauncherError(ArenaError):
    """The launcher cannot be started, or stopped answering (it is then killed)."""


class SpawnError(ArenaError):
    """A bot could not be started: its program, its folder, a limit the system cannot apply."""


@dataclass(frozen=True)
class ChildExit:
    """How a bot's first process ended. ``status``: exit code, -signal, or None if unknown
    (its launcher was lost). ``reason`` is ``memory`` when the arena killed it for memory."""

    status: int | None
    reason: str = ""
    detail: str = ""
    usage: Usage = Usage()
    # The launcher's absolute counters at its last measure: user and system seconds since the
    # bot started, and when (monotonic): ``Child`` counts from its own starting point with them.
    totals: tuple[float, float, float] | None = None


class Child:
    """A bot process the launcher started.

    Where its cgroups count its CPU time and exact peak memory (``counters``), the arena keeps
    its starting point and reads them itself, at a match's start and end, instead of asking
    the launcher: a message and its wake-ups cost more than the rest of a match's bookkeeping.
    The launcher's account of such a bot then runs from the bot's start, and once the bot has
    ended its report is counted from the arena's starting point (``ChildExit.totals``)."""

    def __init__(self, launcher: LauncherClient, child_id: int, pid: int, scratch: str | None = None,
                 counters: Mapping[str, Any] | None = None, clock: Mapping[str, Any] | None = None,
                 oom: Mapping[str, Any] | None = None) -> None:
        self.launcher = launcher
        self.id = child_id
        self.pid = pid
        self.exit: ChildExit | None = None
        self.scratch = scratch  # its private TMPDIR (arena.harness.sandbox), removed once its tree is killed
        self.counters = counters
        self._files: cgroups.CounterFiles | None = None  # opened at the first count
        self._base: tuple[float, float, float] | None = None  # user, system, monotonic at the reset
        self._clock_file = clock  # where its cgroup counts its CPU time, for the cpu clock
        self._clock: cgroups.CpuClock | TreeClock | None = None
        self._oom = oom  # where its group counts memory kills, and the count at its start

    def killed_for_memory(self) -> bool:
        """The kernel killed one of its processes for its memory (its group says so), while
        the group lasts: the launcher removes it once the bot's tree is gone. Read where the
        launcher's news of its end is late."""
        oom = self._oom
        if oom is None:
            return False
        try:
            path, base = str(oom["path"]), int(oom["base"])
        except (KeyError, TypeError, ValueError):
            return False
        return cgroups.oom_kill_count(proctree.read_text(path)) > base

    @property
    def cpu_seconds(self) -> Callable[[], float | None]:
        """Its tree's CPU time in seconds now, by a call that costs one read where a cgroup
        counts it (else a walk of its tree in /proc); None once it is gone. What the cpu
        clock reads at each request and reply."""
        clock = self._clock
        if clock is None:
            where = self._clock_file
            if where is not None:
                try:
                    clock = cgroups.CpuClock(int(where["version"]), str(where["path"]))
                except (KeyError, TypeError, ValueError, OSError):
                    clock = None
            self._clock = clock = clock or TreeClock(self.pid)
        return clock

    @property
    def cpu_by_cgroup(self) -> bool:
        """Its CPU time per move is read from its cgroup (``cpu_seconds``)."""
        return self._clock_file is not None

    def restart_count(self) -> bool:
        """Count from now on, from its counters: its starting point kept here, its peak reset.
        False where it cannot be (no counters, or they cannot be reset): the launcher is then
        told, and from then on asked."""
        if self.counters is None:
            return False
        files = self._files
        if files is None:
            files = self._files = cgroups.CounterFiles(self.counters)
        cpu = files.cpu()
        if cpu is None or not files.reset_peak():
            self.counters = self._base = None
            self.release()
            return False
        self._base = (cpu[0], cpu[1], time.monotonic())
        return True

    def release(self) -> None:
        """Close its counter files (it has ended, or is being replaced): reads then say None."""
        if self._files is not None:
            self._files.close()
        if self._clock is not None:
            self._clock.close()

    @property
    def counting(self) -> bool:
        """The arena keeps its starting point (``restart_count``)."""
        return self._base is not None

    def counted(self, ended: ChildExit | None = None) -> Usage | None:
        """What it used since ``restart_count``: from its counters while it runs, from the
        launcher's last measure (``ended``, its exit) once it has ended. None where the arena
        keeps no starting point (the launcher is then asked) or the counters are gone."""
        base = self._base
        if base is None:
            return None
        if ended is None:
            read = self._files.read() if self._files is not None else None
            if read is None:
                return None
            user, system, peak, at = read[0], read[1], read[2], time.monotonic()
        else:
            self.release()  # its group is gone
            if ended.totals is None:
                return Usage()  # its launcher was lost: nothing measured
            (user, system, at), peak = ended.totals, ended.usage.peak_memory_bytes
        user, system = max(0.0, user - base[0]), max(0.0, system - base[1])
        return Usage(cpu_s=round(user + system, 6), user_s=round(user, 6), system_s=round(system, 6),
                     wall_s=round(max(0.0, at - base[2]), 6), peak_memory_bytes=peak, source="cgroup")

    @property
    def returncode(self) -> int | None:
        """None while it runs (or its end is not known yet)."""
        return self.exit.status if self.exit is not None else None

    @property
    def running(self) -> bool:
        return self.exit is None

    def wait(self, timeout: float) -> ChildExit | None:
        """How it ended, waiting at most ``timeout`` seconds for the news."""
        return self.launcher.wait(self, timeout)


class LauncherClient:
    """The arena's end of one launcher process. Thread-safe: a reader thread takes every
    message; callers wait for their replies with a deadline."""

    def __init__(self, *, cgroups: bool | None = None, landlock: bool | None = None, sealed: bool | None = None,
                 wait: bool = True) -> None:
        """Start a launcher and, unless ``wait`` is false, wait for its hello (``await_hello``
        does it later: the launcher's start then overlaps the caller's work)."""
        if cgroups is None:
            cgroups = not sandbox.switched_off(CGROUPS_ENV)
        if landlock is None:
            landlock = not sandbox.switched_off()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # A launcher that stops reading (a bot may SIGSTOP it) must not block a send for ever.
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(_SEND_TIMEOUT), 0))
        argv = [sys.executable, "-I", "-S", launcher_program.__file__, str(theirs.fileno())]
        if not cgroups:
            argv.append("--no-cgroups")
        if not landlock:
            argv.append("--no-landlock")
        if sealed is None:
            sealed = not seal.switched_off()
        bwrap = seal.find_bwrap() if sealed else None
        if bwrap is not None:
            argv += ["--bwrap", bwrap]
        elif not sealed:
            argv.append("--no-seal")
        try:
            self._proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True, close_fds=True)
        except OSError as exc:
            ours.close()
            raise LauncherError(f"cannot start the bot launcher: {exc}") from None
        finally:
            theirs.close()
        self._sock = ours
        self.owner = os.getpid()
        _launchers.add(self)
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._children: dict[int, Child] = {}
        # The news of an end that came before the arena took in its bot's start: a bot may end
        # between the launcher's reply to a spawn and the spawning thread's next turn.
        self._early_exits: dict[int, ChildExit] = {}
        self._seq = 0
        self._lost = False
        self._last_beat = time.monotonic()
        self.info: dict[str, Any] = {}
        self.pid = 0
        if wait:
            self.await_hello()

    @property
    def greeted(self) -> bool:
        """Whether its hello has come (``await_hello``)."""
        return bool(self.info)

    def await_hello(self) -> None:
        """Wait for the launcher's hello, then listen to it. Raises ``LauncherError`` (and
        kills it) if it does not say hello."""
        if self.info:
            return
        sock = self._sock
        sock.settimeout(_START_TIMEOUT)
        try:
            hello = json.loads(sock.recv(launcher_program.MAX_MESSAGE) or b"null")
        except (OSError, ValueError):
            hello = None
        sock.settimeout(None)
        if not isinstance(hello, dict) or hello.get("op") != "hello":
            self._lost = True
            self._kill_process()
            raise LauncherError("the bot launcher did not start")
        self.info = hello
        self.pid = int(hello["pid"])
        self._last_beat = time.monotonic()
        if self._orphans_come_here:
            _become_subreaper()  # before its first bot: see _kill_orphans
        self._reader = threading.Thread(target=self._read_forever, name="arena-launcher", daemon=True)
        self._reader.start()

    # -- what it says -------------------------------------------------------------------------

    @property
    def containment(self) -> str:
        return str(self.info["containment"])

    @property
    def sealed(self) -> bool:
        """Each bot runs in namespaces of its own (``arena.harness.seal``)."""
        return bool(self.info.get("sealed"))

    @property
    def beyond_bots(self) -> bool:
        """None of its bots can signal it (sealed, or Landlock's scoped signals): if it is lost,
        the machine or a person did it, not a bot."""
        return self.sealed or sandbox.confines_signals(int(self.info.get("landlock") or 0))

    @property
    def bwrap(self) -> str | None:
        """The bubblewrap that seals this launcher's bots (None where it does not seal)."""
        return str(self.info["bwrap"]) if self.sealed and self.info.get("bwrap") else None

    @property
    def _orphans_come_here(self) -> bool:
        """What its bots leave when it is killed comes to this process: they have neither a
        PID namespace (sealed) nor cgroups of their own to be killed with."""
        return not self.sealed and not self.info.get("roots")

    @property
    def no_nested_userns(self) -> bool:
        """This bubblewrap can keep a sealed process from making user namespaces of its own."""
        return bool(self.info.get("no_nested_userns"))

    @property
    def unsealed_why(self) -> str:
        """What the machine lacks to seal bots ('' when they are sealed)."""
        return "" if self.sealed else str(self.info.get("unsealed_why") or "sealing switched off")

    @property
    def alive(self) -> bool:
        return not self._lost and self.owner == os.getpid()

    def confirm(self) -> bool:
        """True unless it is known to be lost. Where its bots can signal it (no Landlock with
        scoped signals) it is asked now: one a bot killed before this, whose death may not
        have reached the arena yet, cannot answer, and its bots are then lost (their ``exit``
        says so). Elsewhere a bot cannot kill it, and the question would only cost a wake-up."""
        if sandbox.confines_signals(int(self.info.get("landlock") or 0)):
            return not self._lost
        try:
            self._request("ping")
        except LauncherError:
            return False
        return True

    def check(self) -> bool:
        """True if it answers; one that has been silent too long (stopped by a bot, say) is
        killed, which kills its bots: they are started afresh with a new launcher."""
        if self._lost:
            return False
        if time.monotonic() - self._last_beat > _SILENCE_S:
            self._give_up()
            return False
        return True

    # -- messages -----------------------------------------------------------------------------

    def _read_forever(self) -> None:
        # One buffer for every message: allocating MAX_MESSAGE bytes per message cost more
        # than the rest of a usage question.
        buf = bytearray(launcher_program.MAX_MESSAGE)
        view = memoryview(buf)
        while True:
            try:
                size = self._sock.recv_into(buf)
            except OSError:
                size = 0
            if not size:
                self._on_lost()
                return
            try:
                msg = json.loads(bytes(view[:size]))
            except ValueError:
                continue
            with self._cond:
                self._last_beat = time.monotonic()
                if "seq" in msg:
                    self._replies[int(msg["seq"])] = msg
                elif msg.get("op") == "exit":
                    child = self._children.get(int(msg["id"]))
                    if child is None:
                        self._early_exits[int(msg["id"])] = _exit_of(msg)
                    elif child.exit is None:
                        child.exit = _exit_of(msg)
                self._cond.notify_all()

    def _on_lost(self) -> None:
        """The launcher is gone (killed, or crashed): its bots died with it (PR_SET_PDEATHSIG);
        what they started may remain in its cgroups, which are cleaned here, or, without
        cgroups, come to this process as orphans, killed here."""
        global _lost_beyond_bots
        with self._cond:
            if self._lost:
                return
            self._lost = True
            if self.info and self.beyond_bots:
                with _lost_lock:
                    _lost_beyond_bots += 1
            sessions = set()
            for child in self._children.values():
                if child.exit is None:
                    child.exit = ChildExit(None, "", "its launcher was lost")
                    sessions.add(child.pid)
            self._cond.notify_all()
        for root in self.info.get("roots", ()):
            cgroups.clean_root(str(root))
        if self._orphans_come_here:
            _kill_orphans(sessions)
        try:
            self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass

    def _request(self, op: str, fds: Sequence[int] = (), timeout: float | None = None,
                 **fields: Any) -> dict[str, Any]:
        if timeout is None:
            timeout = _REPLY_TIMEOUT  # read now, not when the module loaded (a test shortens it)
        with self._cond:
            if self._lost:
                raise LauncherError("the bot launcher is gone")
            self._seq += 1
            seq = self._seq
        data = json.dumps({"op": op, "seq": seq, **fields}).encode()
        if len(data) > launcher_program.MAX_MESSAGE:
            raise LauncherError(f"{op}: message of {len(data)} bytes is too long for the launcher")
        try:
            with self._send_lock:
                socket.send_fds(self._sock, [data], list(fds))
        except OSError as exc:
            self._give_up()
            raise LauncherError(f"the bot launcher does not listen ({exc})") from None
        deadline = time.monotonic() + timeout
        with self._cond:
            while seq not in self._replies:
                remaining = deadline - time.monotonic()
                if self._lost or remaining <= 0:
                    break
                self._cond.wait(remaining)
            reply = self._replies.pop(seq, None)
        if reply is None:
            self._give_up()
            raise LauncherError(f"the bot launcher did not answer {op!r} in {timeout:.0f} s")
        return reply

    def _notify(self, op: str, **fields: Any) -> None:
        """A message without a reply; lost quietly if the launcher is."""
        try:
            with self._send_lock:
                self._sock.send(json.dumps({"op": op, **fields}).encode())
        except OSError:
            pass

    def _give_up(self) -> None:
        """It does not answer: kill it (its bots die with it) and clean up after it."""
        self._kill_process()
        self._on_lost()

    def _kill_process(self) -> None:
        try:
            self._proc.kill()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass

    # -- bots ---------------------------------------------------------------------------------

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None, limits: ResourceLimits,
              fds: Sequence[int], cpus: Sequence[int] | None = None, timeout: float = _START_TIMEOUT,
              hidden: Sequence[str] = (), readable: Sequence[str] = ()) -> Child:
        """Start a bot with ``fds`` as its stdin, stdout and stderr; where Landlock is in force
        it cannot read the ``hidden`` paths (``arena.harness.sandbox``); sealed, it may read the
        ``readable`` folders besides its own."""
        env = dict(env)
        # Sealed or not, this process's first bot clears what dead arenas left in its
        # temporary folder (arena.harness.scratch).
        sweep_once(env.get("TMPDIR"))
        # A sealed bot has a private /tmp of its own; an unsealed one gets a fresh folder.
        scratch = None if self.sealed else sandbox.private_temporary(env)
        if scratch is not None:
            env["TMPDIR"] = scratch
        try:
            reply = self._request("spawn", fds, timeout, argv=list(argv), env=env, cwd=cwd,
                                  limits=limits.to_dict(), network=limits.network,
                                  writable=limits.writable_folders(cwd), hidden=list(hidden), scratch=scratch,
                                  readable=[*seal.ARENA_READABLE, *readable], cpus=sorted(cpus) if cpus else None)
        except BaseException:
            _remove(scratch)
            raise
        if reply.get("op") != "spawned":
            _remove(scratch)
            raise SpawnError(str(reply.get("error", "unknown error")))
        counters, clock, oom = reply.get("counters"), reply.get("clock"), reply.get("oom")
        child = Child(self, int(reply["id"]), int(reply["pid"]), scratch,
                      counters if isinstance(counters, dict) else None, clock if isinstance(clock, dict) else None,
                      oom if isinstance(oom, dict) else None)
        with self._cond:
            child.exit = self._early_exits.pop(child.id, None)
            self._children[child.id] = child
        return child

    def wait(self, child: Child, timeout: float) -> ChildExit | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while child.exit is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
        return child.exit

    def kill(self, child: Child, grace: float) -> ChildExit:
        """SIGTERM to the bot's whole tree, ``grace`` seconds, then SIGKILL until nothing of it
        is left. Returns how it ended (an earlier end, if it had ended on its own)."""
        try:
            reply = self._request("kill", timeout=grace + cgroups.HARD_KILL_S + _REPLY_TIMEOUT,
                                  id=child.id, grace=grace)
            ended = _exit_of(reply)
        except LauncherError as exc:
            ended = ChildExit(None, "", str(exc))
        with self._cond:
            if child.exit is None or (child.exit.status is None and ended.status is not None):
                child.exit = ended
            elif ended.usage.source and not child.exit.usage.source:
                child.exit = replace(child.exit, usage=ended.usage, totals=ended.totals)
            self._children.pop(child.id, None)
            self._cond.notify_all()
        _remove(child.scratch)
        return child.exit

    def usage(self, child: Child) -> Usage:
        return self.usages([child])[0]

    def usages(self, children: Sequence[Child]) -> list[Usage]:
        """What each child used since its last reset: read from its counters where the arena
        keeps its starting point, else in one question for all those still running (a match's
        seats are measured at once: each question costs the launcher a wake-up)."""
        counted = {child.id: usage for child in children if child.exit is None
                   and (usage := child.counted()) is not None}
        running = [child for child in children if child.exit is None and child.id not in counted
                   and not child.counting]
        measured: dict[int, Any] = {}
        if running:
            try:
                reply = self._request("usage", ids=[child.id for child in running])
            except LauncherError:
                reply = {}
            answers = reply.get("usages")
            if isinstance(answers, list) and len(answers) == len(running):
                measured = {child.id: answer for child, answer in zip(running, answers, strict=True)}
        out = []
        for child in children:
            usage = counted.get(child.id)
            if usage is not None:
                out.append(usage)
                continue
            data = measured.get(child.id)
            if data is not None:
                out.append(Usage.from_launcher(data))
                continue
            # It ended (before, or meanwhile: the exit message has it), or the launcher is lost.
            ended = child.exit if child.exit is not None or self._lost else self.wait(child, 1.0)
            if ended is None:
                out.append(Usage())
                continue
            out.append(child.counted(ended) or ended.usage)
        return out

    def reset(self, child: Child) -> None:
        """Count CPU time and peak memory from now on."""
        self.reset_many([child])

    def reset_many(self, children: Sequence[Child]) -> None:
        """``reset`` of each child: by the arena where it has the counters, else in one message."""
        told = [child.id for child in children if child.exit is None and not child.restart_count()]
        if told:
            self._notify("reset", ids=told)

    def close(self, timeout: float = 10.0) -> None:
        """Ask it to kill everything left and exit; wait for that (bounded)."""
        if self._lost or self.owner != os.getpid():
            return
        if not self.info:  # started by ``prestart`` and never used: it has no bots
            self._lost = True
            self._sock.close()
            self._kill_process()
            return
        try:
            self._request("shutdown", timeout=timeout)
        except LauncherError:
            pass
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._give_up()
        with self._cond:
            self._lost = True
        try:
            self._sock.close()
        except OSError:
            pass


def _remove(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _exit_of(msg: Mapping[str, Any]) -> ChildExit:
    status = msg.get("status")
    usage = msg.get("usage") or {}
    try:
        totals = (float(usage["total_user"]), float(usage["total_system"]), float(usage["at"]))
    except (KeyError, TypeError, ValueError):
        totals = None
    return ChildExit(None if status is None else int(status), str(msg.get("reason") or ""),
                     str(msg.get("detail") or ""), Usage.from_launcher(msg.get("usage")), totals)


# --- this process's launcher -------------------------------------------------------------------

_shared: LauncherClient | None = None
_shared_lock = threading.Lock()
_lost_beyond_bots = 0  # launchers_lost_beyond_bots
_lost_lock = threading.Lock()


def launchers_lost_beyond_bots() -> int:
    """How many launchers of this process were lost that none of their bots could have
    brought down (``LauncherClient.beyond_bots``): the arena's misfortune, not a bot's, so a
    match in play then is not the bots' result (arena.tournament.worker plays it again)."""
    return _lost_beyond_bots


def launcher() -> LauncherClient:
    """This process's launcher: started on first use, and again if it was lost or if this
    process is a fork of the one that started it."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            _shared = LauncherClient()
        elif not _shared.greeted:
            try:
                _shared.await_hello()  # started by ``prestart``
            except LauncherError:
                _shared = None
                raise
        return _shared


def prestart() -> None:
    """Start this process's launcher now and go on without waiting for it: a command that
    will run bots calls it first, so that the launcher's own start (a Python of its own)
    overlaps the command's imports. A launcher that cannot start says so at ``launcher()``."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            try:
                _shared = LauncherClient(wait=False)
            except LauncherError:
                _shared = None


def containment_line() -> str:
    """One line saying how bots are contained here, e.g. ``subreaper launcher; cgroup v2
    (kill, cpu) + cgroup v1 (memory, pids); memory limit by cgroup; ...``. Starts this
    process's launcher if needed; says so if it cannot start."""
    try:
        return launcher().containment
    except LauncherError as exc:
        return f"no launcher ({exc})"


class UnsealedError(ArenaError):
    """``--require-sealed`` on a machine that cannot seal its bots (``arena.harness.seal``)."""

    exit_code = ExitCode.BAD_INPUT


def default_clock() -> Clock:
    """The clock bots are on unless a file or option says otherwise: ``cpu`` where this
    machine counts each bot's CPU time in a cgroup (read at each request and reply), else
    ``wall`` (``clock_note`` says why)."""
    return Clock.WALL if clock_note() else Clock.CPU


def clock_note() -> str | None:
    """None where bots are on the cpu clock by default; else the run header's line on why
    they are on the wall clock."""
    try:
        shared = launcher()
    except LauncherError as exc:
        return f"clock: wall by default (no launcher: {exc})"
    if "cpu" in shared.info.get("cgroup_roles", ()):
        return None
    return ("clock: wall by default: this machine gives the arena no cgroup to count each bot's CPU time per move "
            "(clock: cpu would add up the CPU clocks of its processes, found through /proc)")


def unsealed_why() -> str | None:
    """None where this process's bots are sealed; else what the machine lacks."""
    try:
        shared = launcher()
    except LauncherError as exc:
        return f"no launcher ({exc})"
    return None if shared.sealed else shared.unsealed_why


def sealing_line(why: str) -> str:
    """The run header's line for bots that run unsealed, for ``why`` (``unsealed_why``)."""
    return (f"unsealed: {why}: bots share this machine's user, processes, IPC and files "
            "(docs/PROTOCOL.md, \"Limits and containment\")")


def require_sealed() -> None:
    """Raise UnsealedError unless this machine seals its bots."""
    why = unsealed_why()
    if why is not None:
        raise UnsealedError(f"--require-sealed: {sealing_line(why)}")


def shutdown() -> None:
    """Stop this process's launcher (after every bot was closed): at exit."""
    global _shared
    with _shared_lock:
        shared, _shared = _shared, None
    if shared is not None:
        shared.close()


def _forget_after_fork() -> None:
    # A forked child must neither use nor keep open its parent's launcher socket: the
    # launcher learns of the parent's death when the socket ends.
    global _shared
    shared, _shared = _shared, None
    if shared is not None:
        try:
            shared._sock.close()
        except OSError:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


__all__ = ["CGROUPS_ENV", "LANDLOCK_ENV", "Child", "ChildExit", "LauncherClient", "LauncherError", "SpawnError",
           "UnsealedError", "containment_line", "launcher", "prestart", "require_sealed", "sealing_line", "shutdown",
           "unsealed_why"]
