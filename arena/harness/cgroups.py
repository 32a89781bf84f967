"""A bot's cgroups: the hierarchies this machine has (cgroup v2, v1 controllers), a group of
its own per bot that caps its memory and tasks and kills its whole tree at once, the counters
the arena reads (CPU time, peak memory) and the clean-up of groups a lost launcher left.

Standard library only: the launcher (``arena.harness.launcher``) imports it.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    from arena.harness.proctree import CLK_TCK, alive, pread_text, pwrite_text, read_text, signal_all, write_text
except ImportError:  # run by the launcher as a program: the package is not on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from arena.harness.proctree import CLK_TCK, alive, pread_text, pwrite_text, read_text, signal_all, write_text

PREFIX = "escoba-arena-"
MIB = 1 << 20
HARD_KILL_S = 5.0  # how long a kill keeps signalling a tree that will not go (a fork bomb)
KILL_POLL_S = 0.01

_CPU_FILES = {2: ("cpu.stat",), 1: ("cpuacct.stat", "cpuacct.usage")}
# The one file of a group that says its CPU time as one number, read at every request and
# reply of a bot on the cpu clock: cgroup v2's cpu.stat starts with usage_usec; v1's
# cpuacct.usage is nanoseconds.
_CLOCK_FILES = {2: "cpu.stat", 1: "cpuacct.usage"}
QUOTA_PERIOD_US = 100_000  # cpu.max's period: a tenth of a second, the kernel's default


def oom_kill_count(text: str | None) -> int:
    """How many processes the kernel killed for the group's memory, from its memory.events
    (cgroup v2) or memory.oom_control (v1): both say it on an ``oom_kill N`` line."""
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def oom_detail(memory_mb: int) -> str:
    """What a bot's failure says when the kernel killed it for its memory."""
    return f"its processes reached its memory limit of {memory_mb} MB (killed by the kernel)"


def cpu_seconds(version: int, texts: Sequence[str | None]) -> tuple[float, float] | None:
    """(user, system) seconds from the texts of a group's CPU files (``_CPU_FILES``)."""
    stat = dict(line.split(" ", 1) for line in (texts[0] or "").splitlines() if " " in line)
    if version == 2:
        try:
            return int(stat["user_usec"]) / 1e6, int(stat["system_usec"]) / 1e6
        except (KeyError, ValueError):
            return None
    try:
        user, system = int(stat["user"]) / CLK_TCK, int(stat["system"]) / CLK_TCK
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
        texts = [pread_text(fd) for fd in self._cpu]
        return None if None in texts else cpu_seconds(self._version, texts)

    def read(self) -> tuple[float, float, int] | None:
        """``cpu`` and the peak memory in bytes since its last reset."""
        cpu = self.cpu()
        if cpu is None:
            return None
        try:
            return cpu[0], cpu[1], int(pread_text(self._peak) or "")
        except ValueError:
            return None

    def reset_peak(self) -> bool:
        """Start the peak again from the current usage."""
        return not self._closed and pwrite_text(self._peak, "0")

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



class CpuClock:
    """A bot's CPU time (user + system of its whole group, seconds) read from one counter file
    kept open: what the cpu clock charges a move (``containment.Child.cpu_seconds``). A read
    is one ``pread``; None once the group is gone or the file cannot be read."""

    __slots__ = ("_fd", "_version")

    def __init__(self, version: int, path: str) -> None:
        self._version = version
        self._fd = os.open(path, os.O_RDONLY)

    def __call__(self) -> float | None:
        if self._fd < 0:
            return None
        try:
            data = os.pread(self._fd, 64, 0)
            if self._version == 2:  # b"usage_usec 1234\n..."
                return int(data[11:data.index(b"\n")]) / 1e6
            return int(data) / 1e9
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # unreachable: nobody else holds its descriptor
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the os module may be half gone
            pass


# --- cgroups ---------------------------------------------------------------------------------

# The v1 controllers used, and what for ("cpus": the cpu controller's quota, ``cpus:``).
_V1_ROLES = {"memory": "memory", "pids": "pids", "freezer": "kill", "cpuacct": "cpu", "cpu": "cpus"}


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
    mountinfo = read_text("/proc/self/mountinfo")
    membership = read_text("/proc/self/cgroup")
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
    data = read_text(os.path.join(path, "cgroup.procs"))
    return {int(x) for x in data.split()} if data else set()


def kill_group(path: str) -> None:
    """SIGKILL every process of the cgroup at ``path`` (and of the cgroups below it, for v2)."""
    if write_text(os.path.join(path, "cgroup.kill"), "1"):
        return
    freezer = os.path.join(path, "freezer.state")
    frozen = write_text(freezer, "FROZEN")
    if frozen:  # a frozen task cannot fork: the list below is complete
        deadline = time.monotonic() + 1.0
        while (read_text(freezer) or "").strip() == "FREEZING" and time.monotonic() < deadline:
            time.sleep(0.001)
    signal_all(_group_members(path), signal.SIGKILL)
    if frozen:
        write_text(freezer, "THAWED")


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
                for controller in ("memory", "pids", "cpu"):
                    write_text(os.path.join(root, "cgroup.subtree_control"), f"+{controller}")
                enabled = (read_text(os.path.join(root, "cgroup.subtree_control")) or "").split()
                roles += [c for c in ("memory", "pids") if c in enabled]
                if "cpu" in enabled:
                    roles.append("cpus")
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
        for role in ("kill", "cpu", "memory", "pids", "cpus"):
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
        if alive(pid) and "launcher" in (read_text(f"/proc/{pid}/cmdline") or ""):
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
        self.cpus_limited = False  # the kernel holds the group to its CPUs' worth (``cpus``)
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
        return read_text(path) if fd < 0 else pread_text(fd)

    def write(self, path: str, text: str) -> bool:
        fd = self._fd(path, os.O_WRONLY)
        return write_text(path, text) if fd < 0 else pwrite_text(fd, text)

    def close_files(self) -> None:
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        BotGroup.kept -= len(self._fds)
        self._fds.clear()

    def create(self, memory: int, tasks: int, cpus: int = 0) -> None:
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
                self.memory_limited = write_text(os.path.join(d, "memory.max"), str(memory))
                write_text(os.path.join(d, "memory.swap.max"), "0")
                write_text(os.path.join(d, "memory.oom.group"), "1")
            else:
                self.memory_limited = write_text(os.path.join(d, "memory.limit_in_bytes"), str(memory))
                write_text(os.path.join(d, "memory.memsw.limit_in_bytes"), str(memory))
        if tasks and "pids" in self.dirs:
            write_text(os.path.join(self.dirs["pids"], "pids.max"), str(tasks))
        if cpus and "cpus" in self.dirs:
            # A quota of CPU time per period over all the group's threads: N CPUs' worth,
            # however many threads it spins.
            d, quota = self.dirs["cpus"], cpus * QUOTA_PERIOD_US
            if self.versions["cpus"] == 2:
                self.cpus_limited = write_text(os.path.join(d, "cpu.max"), f"{quota} {QUOTA_PERIOD_US}")
            else:
                self.cpus_limited = (write_text(os.path.join(d, "cpu.cfs_period_us"), str(QUOTA_PERIOD_US))
                                     and write_text(os.path.join(d, "cpu.cfs_quota_us"), str(quota)))

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

    def _oom_path(self) -> str:
        name = "memory.events" if self.versions["memory"] == 2 else "memory.oom_control"
        return os.path.join(self.dirs["memory"], name)

    def oom_kills(self) -> int:
        if "memory" not in self.dirs:
            return 0
        return oom_kill_count(self.read(self._oom_path()))

    def oom_file(self) -> dict[str, Any] | None:
        """Where the arena may read this group's count of memory kills itself
        (``oom_kill_count``), with the count now: the launcher's news of a bot's end says why
        it ended, but may come late, and a bot the kernel killed for its memory is recorded as
        such whenever that news comes."""
        if "memory" not in self.dirs:
            return None
        return {"path": self._oom_path(), "base": self.oom_kills()}

    def _cpu_files(self) -> list[str]:
        d = self.dirs["cpu"]
        return [os.path.join(d, name) for name in _CPU_FILES[self.versions["cpu"]]]

    def cpu(self) -> tuple[float, float] | None:
        """(user, system) seconds of every process that ever ran in the group."""
        if "cpu" not in self.dirs:
            return None
        return cpu_seconds(self.versions["cpu"], [self.read(path) for path in self._cpu_files()])

    def clock_file(self) -> dict[str, Any] | None:
        """Where the arena reads this group's CPU time per move (``CpuClock``), or None."""
        if "cpu" not in self.dirs:
            return None
        version = self.versions["cpu"]
        return {"version": version, "path": os.path.join(self.dirs["cpu"], _CLOCK_FILES[version])}

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
        signal_all(self.members(), signal.SIGKILL)

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


