"""The launcher: the one process that starts the bots of an arena process, and outlives it.

The arena (``arena.harness.containment``) starts one launcher per arena process and asks it, over a
Unix socket, to start bots (their pipes passed as file descriptors), to kill them, and how
much CPU and memory they used. The launcher:

- is a child subreaper (``PR_SET_CHILD_SUBREAPER``): a bot's descendant whose parent exits
  (double fork, ``setsid``, a crash) is re-parented to it, whatever its session or
  environment, and it kills every such orphan at once: a bot's processes stay in its tree;
- puts each bot in cgroups of its own where it can create them (cgroup v2, v1 controllers,
  or both), which cap its memory and its number of tasks and kill its whole tree at once;
- otherwise finds a bot's tree through ``/proc`` and kills it when the resident memory of
  the tree goes over the bot's limit (measured every ``SAMPLE_S``);
- starts each bot in its own session, with ``PR_SET_PDEATHSIG`` towards itself and resource
  limits (open files, file size, no core dumps), sealed where the machine allows it: inside
  bubblewrap, in user, PID, IPC, UTS, network and mount namespaces of its own
  (``arena.harness.seal``); where it cannot be sealed, in a Landlock domain of its own where the
  kernel has Landlock (``arena.harness.sandbox``: no writes outside temporary folders, no signals
  or tracing out of its tree) and an empty network namespace unless it asked for the network;
- when the arena goes away (its socket ends: a normal exit, or ``kill -9`` of the arena)
  kills every process left, removes its cgroups, then exits.

It runs as a program of its own (``python -I -S launcher.py FD [--no-cgroups] [--no-landlock]
[--bwrap PATH]``) and imports only the standard library, ``arena.harness.sandbox`` and
``arena.harness.seal`` (which do too): it starts in
tens of milliseconds, single-threaded (so forking is safe), and nothing the arena imports can
disturb it. The arena imports it too, for the
clean-up of cgroups a lost launcher left behind.

Messages are JSON objects, one per ``SOCK_SEQPACKET`` packet. Requests carry ``seq``; the
reply carries the same ``seq``. ``exit`` is sent unasked when a bot's first process ends.
``usage`` and ``reset`` name one bot (``id``) or several at once (``ids``: the seats of a match).
"""

from __future__ import annotations

import array
import ctypes
import errno
import fcntl
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

try:
    from arena.harness import sandbox, seal
except ImportError:  # run as a program (python -I -S launcher.py): the package is not on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from arena.harness import sandbox, seal

PREFIX = "escoba-arena-"
SAMPLE_S = 0.1  # how often memory is measured and orphans are looked for
BEAT_S = 1.0  # how often it tells the arena it is alive (a bot may SIGSTOP it)
KILL_POLL_S = 0.01
HARD_KILL_S = 5.0  # how long a kill keeps signalling a tree that will not go (a fork bomb)
MAX_MESSAGE = 1 << 20
# Room for the file descriptors of one message (a spawn passes the bot's three pipes).
_FDS_SPACE = socket.CMSG_SPACE(8 * array.array("i").itemsize)
MIB = 1 << 20

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = resource.getpagesize()
# What a bot's signals must be on exec: Python (here) ignores SIGPIPE and SIGXFSZ, and the
# launcher catches the others; ignored signals would stay ignored across exec.
_RESET_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGCHLD", "SIGPIPE", "SIGXFSZ", "SIGXCPU", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)


# --- /proc -----------------------------------------------------------------------------------

_HAS_CHILDREN_FILE = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _read(path: str) -> str | None:
    """A small file's text (of /proc or a cgroup), or None. Read through a bare descriptor:
    half the cost of a Python file object, and some are read every 100 ms or every match."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _pread(fd: int) -> str | None:
    """A small file's text through a descriptor kept open on it, read afresh from its start (a
    counter file is made anew at each read from offset 0), or None."""
    try:
        return os.pread(fd, 65536, 0).decode()
    except (OSError, ValueError):
        return None


def _pwrite(fd: int, text: str) -> bool:
    try:
        os.pwrite(fd, text.encode(), 0)
        return True
    except OSError:
        return False


def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError:
        return False


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    data = _read(f"/proc/{pid}/stat")
    if data is None:
        return None
    return data[data.rfind(")") + 2:].split()


def alive(pid: int) -> bool:
    """True if ``pid`` runs (exists and is not a zombie)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _ppids() -> dict[int, list[int]]:
    """Parent -> children over the whole of /proc (when the per-task children files are missing)."""
    out: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None:
                out.setdefault(int(fields[1]), []).append(int(entry))
    return out


def children(pid: int) -> list[int]:
    """The children of every thread of ``pid``."""
    if not _HAS_CHILDREN_FILE:
        return _ppids().get(pid, [])
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        data = _read(f"/proc/{pid}/task/{tid}/children")
        if data:
            out.extend(int(x) for x in data.split())
    return out


def tree(roots: Iterable[int]) -> set[int]:
    """``roots`` that still exist and all their descendants."""
    found: set[int] = set()
    stack = [pid for pid in roots if _stat_fields(pid) is not None]
    by_parent = None if _HAS_CHILDREN_FILE else _ppids()
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children(pid) if by_parent is None else by_parent.get(pid, []))
    return found


def _rss(pid: int) -> int:
    data = _read(f"/proc/{pid}/statm")
    try:
        return int(data.split()[1]) * _PAGE if data else 0
    except (IndexError, ValueError):
        return 0


def _pss(pid: int) -> int | None:
    """Proportional set size: the process's resident memory with each page it shares divided
    among its sharers. Exact for a tree of forked processes, but costly: read only to
    confirm a sum of RSS that is over a limit."""
    data = _read(f"/proc/{pid}/smaps_rollup")
    if data is None:
        return None
    for line in data.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return None


def tree_memory(pids: Iterable[int], limit: int) -> int:
    """The resident memory of a tree: the sum of its RSS, where that is within ``limit`` (it
    can only overstate); else the sum of its PSS, which counts shared pages once."""
    pids = list(pids)
    total = sum(_rss(pid) for pid in pids)
    if limit and total > limit and len(pids) > 1:
        shares = [_pss(pid) for pid in pids]
        if all(share is not None for share in shares):
            total = sum(share for share in shares if share is not None)
    return total


def _cpu(pid: int) -> tuple[float, float]:
    """(user, system) seconds of ``pid`` and of the children it has waited for."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 15:
        return 0.0, 0.0
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + cutime) / _CLK_TCK, (stime + cstime) / _CLK_TCK


# The files a group's CPU time is read from, by cgroup version.
_CPU_FILES = {2: ("cpu.stat",), 1: ("cpuacct.stat", "cpuacct.usage")}


def cpu_seconds(version: int, texts: Sequence[str | None]) -> tuple[float, float] | None:
    """(user, system) seconds from the texts of a group's CPU files (``_CPU_FILES``)."""
    stat = dict(line.split(" ", 1) for line in (texts[0] or "").splitlines() if " " in line)
    if version == 2:
        try:
            return int(stat["user_usec"]) / 1e6, int(stat["system_usec"]) / 1e6
        except (KeyError, ValueError):
            return None
    try:
        user, system = int(stat["user"]) / _CLK_TCK, int(stat["system"]) / _CLK_TCK
    except (KeyError, ValueError):
        return None
    # The tick counts are coarse; the total in nanoseconds is exact: split it in their ratio.
    try:
        exact = int(texts[1] or "") / 1e9
    except ValueError:
        return user, system
    if user + system > 0:
        return exact * user / (user + system), exact * system / (user + system)
    return exact, 0.0


class CounterFiles:
    """A bot's group counters (``Group.counters``) as the arena reads them: its CPU time and its
    exact peak memory since the peak's last reset. The files are opened once and kept: each is
    read at every match's start and end, and opening a cgroup file costs several times reading
    it. Not thread-safe: one owner (``containment.Child``) reads and closes them. Once the
    group is removed, every read says None (its files then fail with ENODEV)."""

    __slots__ = ("_version", "_cpu", "_peak", "_closed")

    def __init__(self, counters: Mapping[str, Any]) -> None:
        self._closed = False
        self._cpu: list[int] = []
        self._peak = -1
        try:
            self._version = int(counters["cpu_version"])
            cpu, peak = [str(path) for path in counters["cpu"]], str(counters["peak"])
            for path in cpu:
                self._cpu.append(os.open(path, os.O_RDONLY))
            self._peak = os.open(peak, os.O_RDWR)
        except (KeyError, TypeError, ValueError, OSError):
            self.close()

    def cpu(self) -> tuple[float, float] | None:
        """(user seconds, system seconds) of the group, or None (gone, closed, unreadable)."""
        if self._closed:
            return None
        texts = [_pread(fd) for fd in self._cpu]
        return None if None in texts else cpu_seconds(self._version, texts)

    def read(self) -> tuple[float, float, int] | None:
        """``cpu`` and the peak memory in bytes since its last reset."""
        cpu = self.cpu()
        if cpu is None:
            return None
        try:
            return cpu[0], cpu[1], int(_pread(self._peak) or "")
        except ValueError:
            return None

    def reset_peak(self) -> bool:
        """Start the peak again from the current usage."""
        return not self._closed and _pwrite(self._peak, "0")

    def __del__(self) -> None:  # unreachable: nobody else holds its descriptors
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the os module may be half gone
            pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in [*self._cpu, self._peak]:
            if fd >= 0:
                os.close(fd)
        self._cpu, self._peak = [], -1


def _kill(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


# --- cgroups ---------------------------------------------------------------------------------

# The v1 controllers used, and what for.
_V1_ROLES = {"memory": "memory", "pids": "pids", "freezer": "kill", "cpuacct": "cpu"}


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy and this process's cgroup directory in it."""

    version: int
    controllers: frozenset[str]  # v1: the controllers it carries; v2: empty (see Cgroups)
    own: str


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def hierarchies() -> list[Hierarchy]:
    """The cgroup hierarchies this process can see, with its own directory in each."""
    mountinfo = _read("/proc/self/mountinfo")
    membership = _read("/proc/self/cgroup")
    if mountinfo is None or membership is None:
        return []
    v1: dict[frozenset[str], str] = {}
    v2: str | None = None
    for line in membership.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        else:
            v1[frozenset(parts[1].split(","))] = parts[2]
    out: list[Hierarchy] = []
    seen: set[str] = set()
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        root, mount, fstype = _unescape(fields[3]), _unescape(fields[4]), rfields[0]
        controllers: frozenset[str] = frozenset()
        if fstype == "cgroup2":
            path, version = v2, 2
        elif fstype == "cgroup":
            options = set(rfields[2].split(","))
            key = next((k for k in v1 if k <= options), None)
            if key is None:
                continue
            path, version, controllers = v1[key], 1, key & frozenset(_V1_ROLES)
            if not controllers:
                continue
        else:
            continue
        if path is None:
            continue
        # In a container the mount may show only part of the hierarchy.
        if root != "/":
            if path != root and not path.startswith(root.rstrip("/") + "/"):
                continue
            path = path[len(root):]
        own = os.path.normpath(os.path.join(mount, path.lstrip("/")))
        if own not in seen and os.path.isdir(own):
            seen.add(own)
            out.append(Hierarchy(version, controllers, own))
    # cgroup v2 first: its kill and cpu are preferred to the v1 freezer and cpuacct.
    out.sort(key=lambda h: -h.version)
    return out


def _group_members(path: str) -> set[int]:
    data = _read(os.path.join(path, "cgroup.procs"))
    return {int(x) for x in data.split()} if data else set()


def kill_group(path: str) -> None:
    """SIGKILL every process of the cgroup at ``path`` (and of the cgroups below it, for v2)."""
    if _write(os.path.join(path, "cgroup.kill"), "1"):
        return
    freezer = os.path.join(path, "freezer.state")
    frozen = _write(freezer, "FROZEN")
    if frozen:  # a frozen task cannot fork: the list below is complete
        deadline = time.monotonic() + 1.0
        while (_read(freezer) or "").strip() == "FREEZING" and time.monotonic() < deadline:
            time.sleep(0.001)
    _kill(_group_members(path), signal.SIGKILL)
    if frozen:
        _write(freezer, "THAWED")


def clean_root(path: str, deadline_s: float = 5.0) -> bool:
    """Kill everything in a launcher's cgroup directory and remove it; True once it is gone.
    Also what the arena does with the cgroups of a launcher it lost."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            subs = [os.path.join(path, e) for e in os.listdir(path) if os.path.isdir(os.path.join(path, e))]
        except OSError:
            return not os.path.exists(path)
        for sub in subs:
            kill_group(sub)
        kill_group(path)
        for sub in subs:
            try:
                os.rmdir(sub)
            except OSError:
                pass
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


@dataclass
class Cgroups:
    """This launcher's cgroups: a directory of its own in each hierarchy it may write to,
    and which of them serves which role (members, kill, cpu, memory, pids)."""

    roots: dict[str, str] = field(default_factory=dict)  # role -> the launcher's directory
    versions: dict[str, int] = field(default_factory=dict)  # role -> cgroup version

    @classmethod
    def create(cls, name: str, found: list[Hierarchy]) -> Cgroups:
        groups = cls()
        for h in found:
            _sweep_stale(h.own)
            root = os.path.join(h.own, name)
            if h.version == 2:
                roles = ["members", "cpu"]
                try:
                    os.mkdir(root)
                except OSError:
                    continue
                if os.path.exists(os.path.join(root, "cgroup.kill")):
                    roles.append("kill")
                for controller in ("memory", "pids"):
                    _write(os.path.join(root, "cgroup.subtree_control"), f"+{controller}")
                enabled = (_read(os.path.join(root, "cgroup.subtree_control")) or "").split()
                roles += [c for c in ("memory", "pids") if c in enabled]
                if not os.path.exists(os.path.join(root, "cpu.stat")):
                    roles.remove("cpu")
            else:
                roles = [_V1_ROLES[c] for c in sorted(h.controllers)]
                roles = [r for r in roles if r not in groups.roots]
                if not roles:
                    continue
                try:
                    os.mkdir(root)
                except OSError:
                    continue
                if "members" not in groups.roots:
                    roles.append("members")
            for role in roles:
                if role not in groups.roots:
                    groups.roots[role] = root
                    groups.versions[role] = h.version
        return groups

    def __bool__(self) -> bool:
        return bool(self.roots)

    def describe(self) -> str:
        by_version: dict[int, list[str]] = {}
        for role in ("kill", "cpu", "memory", "pids"):
            if role in self.roots:
                by_version.setdefault(self.versions[role], []).append(role)
        if not by_version:
            members = self.versions.get("members")
            return f"cgroup v{members} (membership only)" if members else "no cgroups"
        return " + ".join(f"cgroup v{v} ({', '.join(roles)})" for v, roles in sorted(by_version.items(), reverse=True))

    def remove(self) -> None:
        for root in sorted(set(self.roots.values())):
            clean_root(root)


def _sweep_stale(own: str) -> None:
    """Remove the cgroups of launchers that died without cleaning up (kill -9 of both)."""
    try:
        entries = os.listdir(own)
    except OSError:
        return
    for entry in entries:
        if not entry.startswith(PREFIX) or not entry[len(PREFIX):].isdigit():
            continue
        pid = int(entry[len(PREFIX):])
        if alive(pid) and "launcher" in (_read(f"/proc/{pid}/cmdline") or ""):
            continue
        clean_root(os.path.join(own, entry), deadline_s=1.0)


class BotGroup:
    """One bot's cgroups: a directory per role, all named after the bot."""

    # Descriptors kept open by all groups at most: the launcher needs others for its pipes and
    # for the bots it starts, and past this a group reads its files the plain way.
    KEPT_MAX = 256
    kept = 0

    def __init__(self, cgroups: Cgroups, name: str) -> None:
        self.dirs = {role: os.path.join(root, name) for role, root in cgroups.roots.items()}
        self.versions = dict(cgroups.versions)
        self.unique = sorted(set(self.dirs.values()))
        self.memory_limited = False  # the kernel enforces the memory limit
        self._fds: dict[str, int] = {}

    def _fd(self, path: str, flags: int) -> int:
        """A descriptor kept open on one of the group's counters (-1: none). Measuring reads
        three files a match and the sampler three every 100 ms; opening a file costs ten times
        its read, and a counter read again from offset 0 says what holds now."""
        key = f"{flags}:{path}"
        fd = self._fds.get(key)
        if fd is not None:
            return fd
        if BotGroup.kept >= BotGroup.KEPT_MAX:
            return -1
        try:
            fd = os.open(path, flags)
        except OSError:
            return -1
        self._fds[key] = fd
        BotGroup.kept += 1
        return fd

    def read(self, path: str) -> str | None:
        fd = self._fd(path, os.O_RDONLY)
        return _read(path) if fd < 0 else _pread(fd)

    def write(self, path: str, text: str) -> bool:
        fd = self._fd(path, os.O_WRONLY)
        return _write(path, text) if fd < 0 else _pwrite(fd, text)

    def close_files(self) -> None:
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        BotGroup.kept -= len(self._fds)
        self._fds.clear()

    def create(self, memory: int, tasks: int) -> None:
        made: list[str] = []
        try:
            for d in self.unique:
                os.mkdir(d)
                made.append(d)
        except OSError:
            for d in made:
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            raise
        if memory and "memory" in self.dirs:
            d = self.dirs["memory"]
            if self.versions["memory"] == 2:
                self.memory_limited = _write(os.path.join(d, "memory.max"), str(memory))
                _write(os.path.join(d, "memory.swap.max"), "0")
                _write(os.path.join(d, "memory.oom.group"), "1")
            else:
                self.memory_limited = _write(os.path.join(d, "memory.limit_in_bytes"), str(memory))
                _write(os.path.join(d, "memory.memsw.limit_in_bytes"), str(memory))
        if tasks and "pids" in self.dirs:
            _write(os.path.join(self.dirs["pids"], "pids.max"), str(tasks))

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(d, "cgroup.procs") for d in self.unique]

    def members(self) -> set[int]:
        # Opened afresh each time: a kept cgroup v1 cgroup.procs may answer from a list the
        # kernel made up to a second before.
        return _group_members(self.dirs["members"]) if "members" in self.dirs else set()

    def _memory_file(self, v1: str, v2: str) -> int | None:
        if "memory" not in self.dirs:
            return None
        name = v2 if self.versions["memory"] == 2 else v1
        data = self.read(os.path.join(self.dirs["memory"], name))
        try:
            return int(data) if data else None
        except ValueError:
            return None

    def memory(self) -> int | None:
        return self._memory_file("memory.usage_in_bytes", "memory.current")

    def peak(self) -> int | None:
        """The exact peak since ``reset_peak`` (cgroup v1 only; v2 cannot reset it)."""
        if self.versions.get("memory") != 1:
            return None
        return self._memory_file("memory.max_usage_in_bytes", "")

    def reset_peak(self) -> None:
        if self.versions.get("memory") == 1:
            self.write(os.path.join(self.dirs["memory"], "memory.max_usage_in_bytes"), "0")

    def oom_kills(self) -> int:
        if "memory" not in self.dirs:
            return 0
        name = "memory.events" if self.versions["memory"] == 2 else "memory.oom_control"
        for line in (self.read(os.path.join(self.dirs["memory"], name)) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def _cpu_files(self) -> list[str]:
        d = self.dirs["cpu"]
        return [os.path.join(d, name) for name in _CPU_FILES[self.versions["cpu"]]]

    def cpu(self) -> tuple[float, float] | None:
        """(user, system) seconds of every process that ever ran in the group."""
        if "cpu" not in self.dirs:
            return None
        return cpu_seconds(self.versions["cpu"], [self.read(path) for path in self._cpu_files()])

    def counters(self) -> dict[str, Any] | None:
        """Where the arena may read this group's CPU time and peak memory itself
        (``CounterFiles``): where both are counted here and the peak is exact since its last
        reset (cgroup v1's memory), as this launcher's own measure then is."""
        if "cpu" not in self.dirs or self.versions.get("memory") != 1:
            return None
        return {"cpu_version": self.versions["cpu"], "cpu": self._cpu_files(),
                "peak": os.path.join(self.dirs["memory"], "memory.max_usage_in_bytes")}

    def kill(self) -> None:
        if "kill" in self.dirs:
            kill_group(self.dirs["kill"])
        _kill(self.members(), signal.SIGKILL)

    def remove(self) -> bool:
        self.close_files()  # the group's files are about to go
        gone = True
        for d in self.unique:
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
        return gone


# --- the launcher ----------------------------------------------------------------------------


@dataclass
class Bot:
    """A bot the launcher started: its first process and all that it knows about its tree."""

    id: int
    pid: int
    group: BotGroup | None
    memory_limit: int  # bytes; 0: none
    status: int | None = None  # once the first process is reaped: exit code, or -signal
    reason: str = ""  # "memory" when the bot was killed for going over its memory limit
    detail: str = ""
    members: set[int] = field(default_factory=set)  # its tree when last looked at
    dead_user: float = 0.0  # CPU of its processes reaped here (without a cpu cgroup)
    dead_system: float = 0.0
    base_user: float = 0.0
    base_system: float = 0.0
    reset_at: float = field(default_factory=time.monotonic)
    peak: int = 0
    oom_base: int = 0
    kill_after: float | None = None  # SIGKILL from then on (a kill is in progress)
    asked: bool = False  # the arena asked for the kill (else it hears of the end by ``exit``)
    give_up_at: float = 0.0
    waiters: list[int] = field(default_factory=list)
    final: dict[str, Any] | None = None  # the report once it is completely gone
    # Its private TMPDIR (arena.harness.sandbox), which the arena removes once it is killed; this
    # launcher does when the arena is gone first.
    scratch: str | None = None


class Launcher:
    def __init__(self, sock: socket.socket, use_cgroups: bool, use_landlock: bool = True,
                 bwrap: str | None = None, unsealed_why: str = "no bubblewrap (bwrap) found") -> None:
        self.sock = sock
        # Messages are read into one buffer kept for the launcher's life: a fresh buffer of
        # MAX_MESSAGE bytes for each small message cost more than everything else a usage
        # question does.
        self.inbox = bytearray(MAX_MESSAGE)
        self.me = os.getpid()
        self.libc = sandbox.c_library()
        self.subreaper = self.libc is not None and self.libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        self.cgroups = Cgroups.create(f"{PREFIX}{self.me}", hierarchies()) if use_cgroups else Cgroups()
        self.bots: dict[int, Bot] = {}
        self.roots: dict[int, Bot] = {}  # pid of a first process not yet reaped -> its bot
        self.serial = 0
        self.stopping = False
        self.bye: int | None = None
        self.network_off = self._probe_network()
        self.landlock = sandbox.abi(self.libc) if use_landlock else 0
        # Sealed: every bot in namespaces of its own through bubblewrap (arena.harness.seal).
        self.bwrap = bwrap
        self.sealed, self.no_nested_userns, self.unsealed_why = (
            seal.probe(bwrap) if bwrap else (False, False, unsealed_why))
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda s, f: None)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self._on_stop)

    def _on_stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    # -- what it can do ---------------------------------------------------------------------

    def _probe_network(self) -> bool:
        """Can a bot get a network namespace of its own? Tried in a throw-away child."""
        if self.libc is None:
            return False
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                _isolate_network(self.libc)
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0

    def describe(self) -> str:
        groups = self.cgroups
        parts = ["subreaper launcher" if self.subreaper else "launcher (not a subreaper: escaped orphans are not caught)"]
        parts.append(groups.describe() if groups else "no cgroups (bot trees found through /proc)")
        if "memory" in groups.roots:
            parts.append("memory limit by cgroup")
        else:
            parts.append(f"memory limit by /proc every {int(SAMPLE_S * 1000)} ms")
        parts.append("task limit by cgroup" if "pids" in groups.roots else "no task limit (needs the pids cgroup)")
        if self.sealed:
            parts.append("sealed: each bot in its own user, PID, IPC, UTS, network and mount namespaces (bubblewrap)")
        else:
            parts.append("network off available" if self.network_off else "network off unavailable")
            parts.append(sandbox.describe(self.landlock))
        return "; ".join(parts)

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        self.send({"op": "hello", "pid": self.me, "containment": self.describe(),
                   "roots": sorted(set(self.cgroups.roots.values())), "subreaper": self.subreaper,
                   "cgroup_roles": sorted(self.cgroups.roots), "network_off": self.network_off,
                   "landlock": self.landlock, "sealed": self.sealed, "unsealed_why": self.unsealed_why})
        self.sock.setblocking(False)
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(self.wake_r, select.POLLIN)
        next_sample = time.monotonic() + SAMPLE_S
        next_beat = time.monotonic()
        while not self.stopping:
            now = time.monotonic()
            if now >= next_beat:
                self.send({"op": "beat"})
                next_beat = now + BEAT_S
            busy = any(b.kill_after is not None for b in self.bots.values())
            wait = KILL_POLL_S if busy else min(next_beat, next_sample if self.bots else next_beat) - now
            for fd, events in poller.poll(max(0.0, wait) * 1000):
                if fd == self.wake_r:
                    try:
                        while os.read(self.wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                elif events & select.POLLIN:
                    self.receive()
                else:
                    self.stopping = True  # the arena is gone
            self.reap()
            now = time.monotonic()
            if now >= next_sample:
                self.sample()
                self.kill_orphans()
                next_sample = now + SAMPLE_S
            self.progress()

    def receive(self) -> None:
        buf, view = self.inbox, memoryview(self.inbox)
        while True:
            try:
                size, ancillary, _, _ = self.sock.recvmsg_into([buf], _FDS_SPACE)
            except BlockingIOError:
                return
            except OSError:
                self.stopping = True
                return
            fds = _passed_fds(ancillary)
            if not size:
                for fd in fds:
                    os.close(fd)
                self.stopping = True
                return
            try:
                self.handle(json.loads(bytes(view[:size])), fds)
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode()
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.sock.send(data)
                return
            except BlockingIOError:
                # The arena is not reading: wait for room a while, never for ever.
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                select.select([], [self.sock], [], remaining)
            except OSError:
                self.stopping = True
                return

    def handle(self, msg: dict[str, Any], fds: list[int]) -> None:
        op, seq = msg.get("op"), int(msg.get("seq") or 0)
        bot = self.bots.get(msg.get("id", -1))
        if op == "spawn":
            self.send({"seq": seq, **self.spawn(msg, fds)})
        elif op == "kill":
            if bot is None:
                self.send({"seq": seq, "op": "killed", "id": msg.get("id"), "status": None, "reason": "",
                           "detail": "", "usage": None, "survivors": 0})
                return
            bot.waiters.append(seq)
            bot.asked = True
            self.start_kill(bot, float(msg.get("grace", 0.0)))
        elif op == "usage":
            ids = msg.get("ids")
            if isinstance(ids, list):  # the seats of a match at once: one message, not one each
                measured = [self.bots.get(i) for i in ids]
                self.send({"seq": seq, "op": "usage", "usages": [self.usage(b) if b is not None else None
                                                                 for b in measured]})
            else:
                self.send({"seq": seq, "op": "usage", "usage": self.usage(bot) if bot is not None else None})
        elif op == "reset":
            ids = msg.get("ids")
            for one in [self.bots.get(i) for i in ids] if isinstance(ids, list) else [bot]:
                if one is not None:
                    self.reset(one)
        elif op == "ping":  # the arena's proof, at a match's end, that this launcher still runs
            self.send({"seq": seq, "op": "pong"})
        elif op == "shutdown":
            self.bye = seq
            self.stopping = True

    # -- starting a bot ---------------------------------------------------------------------

    def spawn(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        if len(fds) != 3:
            return {"op": "spawn_failed", "error": "expected 3 file descriptors"}
        self.serial += 1
        bot_id = self.serial
        limits = msg.get("limits") or {}
        memory = int(limits.get("memory_mb", 0)) * MIB
        group = None
        if self.cgroups:
            group = BotGroup(self.cgroups, f"bot-{bot_id}")
            try:
                group.create(memory, int(limits.get("processes", 0)))
            except OSError as exc:
                return {"op": "spawn_failed", "error": f"cannot create its cgroup: {exc}"}
        sealed: list[str] | None = None
        if self.sealed:
            try:
                sealed = self._seal(msg, limits)
            except OSError as exc:
                if group is not None:
                    group.remove()
                return {"op": "spawn_failed", "error": str(exc)}
        elif msg.get("network") is False and not self.network_off:
            if group is not None:
                group.remove()
            return {"op": "spawn_failed",
                    "error": "network: false needs network namespaces (unshare), which this system does not allow"}
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child, until exec
            os.close(err_r)
            self._exec(msg, limits, fds, err_w, group.procs_files if group else [], sealed)
        os.close(err_w)
        error = _read_until_eof(err_r, 10.0)
        os.close(err_r)
        if error:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            if group is not None:
                group.remove()
            return {"op": "spawn_failed", "error": error}
        bot = Bot(bot_id, pid, group, memory, members={pid}, scratch=msg.get("scratch"))
        bot.oom_base = group.oom_kills() if group else 0
        self.bots[bot_id] = bot
        self.roots[pid] = bot
        return {"op": "spawned", "id": bot_id, "pid": pid, "counters": group.counters() if group else None}

    def _seal(self, msg: dict[str, Any], limits: dict[str, Any]) -> list[str]:
        """The bubblewrap command line of a bot (arena.harness.seal); OSError when its program
        or folder is missing, in the words an exec would have used."""
        cwd = str(msg.get("cwd") or os.getcwd())
        if not os.path.isdir(cwd):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
        memory = int(limits.get("memory_mb", 0))
        plan = seal.Plan(
            argv=tuple(str(a) for a in msg["argv"]), cwd=cwd,
            env=tuple((str(k), str(v)) for k, v in msg["env"].items()),
            writable=tuple(str(w) for w in msg.get("writable") or ()),
            readable=tuple(str(r) for r in msg.get("readable") or ()),
            hidden=tuple(str(h) for h in msg.get("hidden") or ()),
            network=msg.get("network") is True, tmp_mb=memory or seal.TMP_MB_DEFAULT)
        if self.bwrap is None:  # never: sealed means a bwrap that works
            raise OSError(errno.ENOSYS, "no bubblewrap")
        return seal.arguments(self.bwrap, plan, disable_userns=self.no_nested_userns)

    def _exec(self, msg: dict[str, Any], limits: dict[str, Any], fds: list[int], err: int, procs: list[str],
              sealed: list[str] | None = None) -> NoReturn:
        stage = "setsid"
        try:
            os.setsid()
            if self.libc is not None:
                stage = "prctl"
                self.libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            if os.getppid() != self.me:  # the launcher died before prctl took effect
                os._exit(1)
            stage = "joining its cgroup"
            for path in procs:
                with open(path, "w") as f:
                    f.write(str(os.getpid()))
            stage = "resource limits"
            _set_rlimits(limits)
            signal.set_wakeup_fd(-1)
            for sig in _RESET_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            if sealed is None and (msg.get("network") is False or (msg.get("network") is None and self.network_off)):
                stage = "network namespace"
                _isolate_network(self.libc)
            if sealed is None and self.landlock:  # last: the network namespace writes /proc/self/uid_map
                stage = "landlock"
                env = {str(k): str(v) for k, v in msg["env"].items()}
                folders = sandbox.writable_folders(env, msg.get("writable") or ())
                sandbox.confine(self.landlock, folders, msg.get("hidden") or (), self.libc)
            if msg.get("cpus"):
                stage = "cpu affinity"
                os.sched_setaffinity(0, msg["cpus"])
            stage = "pipes"
            keep = 2
            if sealed is None:
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
            else:
                # bubblewrap's own processes keep their 0, 1 and 2 for the bot's life: the bot's
                # pipes go to it as 3, 4 and 5 (which they close) and seal.arguments' shim moves
                # them into place. Else a bot that closes its stdin would leave a reader.
                high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
                for target, fd in enumerate(high):
                    os.dup2(fd, seal.PASSED_FDS[target])
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                os.dup2(high[2], 2)  # bubblewrap's own complaints go to the bot's log
                keep = max(seal.PASSED_FDS)
            for entry in os.listdir("/proc/self/fd"):
                fd = int(entry)
                if fd > keep and fd != err:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            if msg.get("cwd"):
                stage = "cwd"
                os.chdir(msg["cwd"])
            stage = "exec"
            env = {str(k): str(v) for k, v in msg["env"].items()}
            if sealed is not None:
                os.execve(sealed[0], sealed, seal.environment(env))
            argv = [str(a) for a in msg["argv"]]
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:  # noqa: BLE001 - whatever happens, report it and leave
            text = str(exc) if stage in ("exec", "cwd") else f"{stage}: {exc}"
            try:
                os.write(err, (text or exc.__class__.__name__).encode("utf-8", "replace")[:4000])
            except OSError:
                pass
        os._exit(127)

    # -- watching ----------------------------------------------------------------------------

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            bot = self.roots.pop(pid, None)
            owner = bot or next((b for b in self.bots.values() if pid in b.members), None)
            if owner is not None:
                owner.dead_user += usage.ru_utime
                owner.dead_system += usage.ru_stime
                owner.members.discard(pid)
            if bot is not None:
                self.root_ended(bot, os.waitstatus_to_exitcode(status))

    def root_ended(self, bot: Bot, status: int) -> None:
        """The bot's first process is gone: the bot is over, whatever of it is left dies now."""
        bot.status = status
        if not bot.reason and bot.group is not None and bot.group.oom_kills() > bot.oom_base:
            bot.reason = "memory"
            bot.detail = (f"its processes reached its memory limit of {bot.memory_limit // MIB} MB "
                          "(killed by the kernel)")
        if not bot.asked:
            self.send({"op": "exit", "id": bot.id, "status": status, "reason": bot.reason, "detail": bot.detail,
                       "usage": self.usage(bot)})
        self.start_kill(bot, 0.0)

    def sample(self) -> None:
        """Measure every running bot's memory; kill those over their limit."""
        for bot in list(self.bots.values()):
            if bot.status is not None or bot.kill_after is not None:
                continue
            group = bot.group
            if group is not None and "memory" in group.dirs and (group.memory_limited or not bot.memory_limit):
                used = group.memory() or 0
                bot.peak = max(bot.peak, used, group.peak() or 0)
                bot.members = group.members() | {bot.pid}
                if group.oom_kills() > bot.oom_base:
                    self.over_memory(bot, f"its processes reached its memory limit of {bot.memory_limit // MIB} MB "
                                          "(killed by the kernel)")
                continue
            # Known pids stay until they are reaped: an orphan's CPU still counts for its bot.
            bot.members = (tree([bot.pid]) | (group.members() if group is not None else set())
                           | {pid for pid in bot.members if _stat_fields(pid) is not None})
            used = tree_memory(bot.members, bot.memory_limit)
            bot.peak = max(bot.peak, used)
            if bot.memory_limit and used > bot.memory_limit:
                self.over_memory(bot, f"the resident memory of its processes reached {used / MIB:.0f} MB, "
                                      f"over its memory limit of {bot.memory_limit // MIB} MB")

    def over_memory(self, bot: Bot, detail: str) -> None:
        bot.reason, bot.detail = "memory", detail
        self.hard_kill(bot)

    def kill_orphans(self) -> None:
        """Every child of the launcher that is not a bot's first process is an orphan of some
        bot (its parent exited): it dies, with all it started."""
        orphans = [pid for pid in children(self.me) if pid not in self.roots and alive(pid)]
        if orphans:
            found = tree(orphans)
            for bot in self.bots.values():  # for the CPU account of the orphans reaped later
                if bot.group is not None:
                    bot.members |= found & bot.group.members()
            _kill(found, signal.SIGKILL)

    # -- usage ---------------------------------------------------------------------------------

    def _cpu_now(self, bot: Bot) -> tuple[float, float, str]:
        if bot.group is not None:
            cpu = bot.group.cpu()
            if cpu is not None:
                return cpu[0], cpu[1], "cgroup"
        user, system = bot.dead_user, bot.dead_system
        if bot.status is None:
            for pid in tree([bot.pid]):
                u, s = _cpu(pid)
                user += u
                system += s
        return user, system, "proc"

    def usage(self, bot: Bot) -> dict[str, Any]:
        if bot.final is not None:
            return dict(bot.final["usage"])
        total_user, total_system, source = self._cpu_now(bot)
        peak = bot.peak
        # An exact peak says it all, and is right even where the arena, not this launcher, reset
        # it (the samples then count from the bot's start).
        exact = bot.group.peak() if bot.group is not None else None
        if exact is not None:
            peak = exact
        elif bot.group is not None and bot.status is None:
            peak = max(peak, bot.group.memory() or 0)
        elif bot.status is None:
            peak = max(peak, tree_memory(tree([bot.pid]), bot.memory_limit))
        user, system = max(0.0, total_user - bot.base_user), max(0.0, total_system - bot.base_system)
        now = time.monotonic()
        return {"user": round(user, 6), "system": round(system, 6), "cpu": round(user + system, 6),
                "wall": round(now - bot.reset_at, 6), "peak": peak, "source": source,
                "total_user": round(total_user, 6), "total_system": round(total_system, 6), "at": round(now, 6)}

    def reset(self, bot: Bot) -> None:
        if bot.status is not None:
            return
        bot.base_user, bot.base_system, _ = self._cpu_now(bot)
        bot.reset_at = time.monotonic()
        bot.peak = 0
        if bot.group is not None:
            bot.group.reset_peak()

    # -- killing ---------------------------------------------------------------------------------

    def targets(self, bot: Bot) -> set[int]:
        found = tree([bot.pid]) if bot.status is None else set()
        if bot.group is not None:
            found |= bot.group.members()
        return found

    def start_kill(self, bot: Bot, grace: float) -> None:
        if bot.kill_after is not None:
            return
        now = time.monotonic()
        bot.kill_after = now + max(0.0, grace)
        bot.give_up_at = bot.kill_after + HARD_KILL_S
        if grace > 0:
            _kill(self.targets(bot), signal.SIGTERM)
        else:
            self.hard_kill(bot)

    def hard_kill(self, bot: Bot) -> None:
        now = time.monotonic()
        if bot.kill_after is None or bot.kill_after > now:
            bot.kill_after = now
            bot.give_up_at = now + HARD_KILL_S
        if bot.group is not None:
            bot.group.kill()
        _kill(self.targets(bot), signal.SIGKILL)

    def progress(self) -> None:
        """Move every kill in progress on; report those that are complete."""
        now = time.monotonic()
        orphans: list[int] | None = None
        for bot in list(self.bots.values()):
            if bot.kill_after is None:
                continue
            left = self.targets(bot)
            if left and now >= bot.kill_after and now < bot.give_up_at:
                self.hard_kill(bot)
                continue
            if orphans is None:
                orphans = [p for p in children(self.me) if p not in self.roots and alive(p)]
                if orphans:
                    _kill(tree(orphans), signal.SIGKILL)
            done = (not left and bot.status is not None and not orphans) or now >= bot.give_up_at
            if done:
                self.finish(bot, len(left) + len(orphans), now >= bot.give_up_at)

    def finish(self, bot: Bot, survivors: int, late: bool) -> None:
        if bot.final is None:
            usage = self.usage(bot)
            bot.final = {"status": bot.status, "reason": bot.reason, "detail": bot.detail, "usage": usage}
        if bot.group is not None and not bot.group.remove() and not late:
            return  # the kernel is still tearing the group down: try again on the next round
        self.bots.pop(bot.id, None)
        self.roots.pop(bot.pid, None)
        for seq in bot.waiters:
            self.send({"seq": seq, "op": "killed", "id": bot.id, **bot.final, "survivors": survivors})
        bot.waiters.clear()

    def cleanup(self) -> None:
        """The arena is gone or says goodbye: nothing that any bot started may stay."""
        deadline = time.monotonic() + HARD_KILL_S
        while True:
            for bot in self.bots.values():
                if bot.group is not None:
                    bot.group.kill()
            left = tree(children(self.me))
            for bot in self.bots.values():
                if bot.group is not None:
                    left |= bot.group.members()
            _kill(left, signal.SIGKILL)
            self.reap()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        for bot in list(self.bots.values()):
            if bot.group is not None:
                bot.group.remove()
            if bot.scratch:
                shutil.rmtree(bot.scratch, ignore_errors=True)
        self.cgroups.remove()
        if self.bye is not None:
            self.send({"seq": self.bye, "op": "bye"})


def _passed_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The file descriptors a message carried (``SCM_RIGHTS``), as ``socket.recv_fds`` gives them."""
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    return list(fds)


def _read_until_eof(fd: int, timeout: float) -> str:
    """What a starting child reported on its error pipe (empty: it reached exec)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "the bot's process did not reach exec in time"
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(chunk)


def _set_rlimits(limits: dict[str, Any]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which, unit in (("open_files", resource.RLIMIT_NOFILE, 1), ("file_size_mb", resource.RLIMIT_FSIZE, MIB)):
        value = int(limits.get(key, 0)) * unit
        if value <= 0:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def _isolate_network(libc: Any) -> None:
    """Put the calling process in a new, empty network namespace (loopback only, down)."""
    if libc is None:
        raise OSError(errno.ENOSYS, "no C library to call unshare")
    if libc.unshare(_CLONE_NEWNET) == 0:
        return
    # Without the privilege: a user namespace of its own (where the process may make one)
    # that maps it to itself.
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"unshare: {os.strerror(code)}")
    _write("/proc/self/setgroups", "deny")
    if not (_write("/proc/self/uid_map", f"{uid} {uid} 1") and _write("/proc/self/gid_map", f"{gid} {gid} 1")):
        raise OSError(errno.EPERM, "cannot map the user into its namespace")


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    bwrap = argv[argv.index("--bwrap") + 1] if "--bwrap" in argv else None
    why = f"sealing switched off ({seal.SEAL_ENV}=off)" if "--no-seal" in argv else "no bubblewrap (bwrap) found"
    launcher = Launcher(sock, use_cgroups="--no-cgroups" not in argv, use_landlock="--no-landlock" not in argv,
                        bwrap=bwrap, unsealed_why=why)
    try:
        launcher.run()
    finally:
        launcher.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
