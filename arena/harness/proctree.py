"""A bot's process tree as ``/proc`` shows it: who is alive, whose children, how much memory
and CPU time, and signals to a whole set at once. The launcher (``arena.harness.launcher``)
uses it where a bot has no cgroup of its own, and to find orphans.

Standard library only: the launcher imports it.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterable

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = resource.getpagesize()
# The kernel's CPUCLOCK_SCHED: a process clock that counts its run time in nanoseconds, as
# glibc's clock_getcpuclockid(pid) encodes it (``((~pid) << 3) | 2``).
_CPUCLOCK_SCHED = 2


_HAS_CHILDREN_FILE = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def read_text(path: str) -> str | None:
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


def pread_text(fd: int) -> str | None:
    """A small file's text through a descriptor kept open on it, read afresh from its start (a
    counter file is made anew at each read from offset 0), or None."""
    try:
        return os.pread(fd, 65536, 0).decode()
    except (OSError, ValueError):
        return None


def pwrite_text(fd: int, text: str) -> bool:
    try:
        os.pwrite(fd, text.encode(), 0)
        return True
    except OSError:
        return False


def write_text(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError:
        return False


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    data = read_text(f"/proc/{pid}/stat")
    if data is None:
        return None
    return data[data.rfind(")") + 2:].split()


def alive(pid: int) -> bool:
    """True if ``pid`` runs (exists and is not a zombie)."""
    fields = stat_fields(pid)
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
            fields = stat_fields(int(entry))
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
        data = read_text(f"/proc/{pid}/task/{tid}/children")
        if data:
            out.extend(int(x) for x in data.split())
    return out


def tree(roots: Iterable[int]) -> set[int]:
    """``roots`` that still exist and all their descendants."""
    found: set[int] = set()
    stack = [pid for pid in roots if stat_fields(pid) is not None]
    by_parent = None if _HAS_CHILDREN_FILE else _ppids()
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children(pid) if by_parent is None else by_parent.get(pid, []))
    return found


def _rss(pid: int) -> int:
    data = read_text(f"/proc/{pid}/statm")
    try:
        return int(data.split()[1]) * _PAGE if data else 0
    except (IndexError, ValueError):
        return 0


def _pss(pid: int) -> int | None:
    """Proportional set size: the process's resident memory with each page it shares divided
    among its sharers. Exact for a tree of forked processes, but costly: read only to
    confirm a sum of RSS that is over a limit."""
    data = read_text(f"/proc/{pid}/smaps_rollup")
    if data is None:
        return None
    for line in data.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return None


def _file_bytes(pids: Iterable[int], extra: int = 0) -> int:
    """What the tree holds in memory files beyond what it maps: its memory files
    (``memfd_create``), each once, and ``extra`` (what its private tmpfs folders hold, for a
    sealed bot). Such a file is memory no RSS counts while it is not mapped, and it holds any
    amount (cgroups charge it; without them only this counts it). The tree's mapped shared
    memory (RssShmem) is left out, since the RSS counts it already."""
    pids = list(pids)
    files: dict[int, int] = {}
    for pid in pids:
        folder = f"/proc/{pid}/fd"
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            path = f"{folder}/{entry}"
            try:
                if os.readlink(path).startswith("/memfd:"):
                    st = os.stat(path)
                    files[st.st_ino] = st.st_size
            except OSError:
                continue
    if not files and not extra:
        return 0
    mapped = 0
    for pid in pids:
        status = read_text(f"/proc/{pid}/status") or ""
        for line in status.splitlines():
            if line.startswith("RssShmem:"):
                mapped += int(line.split()[1]) * 1024
    return max(0, sum(files.values()) + extra - mapped)


def tree_memory(pids: Iterable[int], limit: int, files: int = 0) -> int:
    """The resident memory of a tree: the sum of its RSS, where that is within ``limit`` (it
    can only overstate); else the sum of its PSS, which counts shared pages once. Its memory
    files count too, and ``files``, what its private tmpfs folders hold (``_file_bytes``)."""
    pids = list(pids)
    held = _file_bytes(pids, files)
    total = sum(_rss(pid) for pid in pids) + held
    if limit and total > limit and len(pids) > 1:
        shares = [_pss(pid) for pid in pids]
        if all(share is not None for share in shares):
            total = sum(share for share in shares if share is not None) + held
    return total


def mount_bytes(pid: int, folders: Iterable[str]) -> int:
    """What the filesystems at ``folders`` hold as ``pid`` sees them (through its root,
    ``/proc/PID/root``): a sealed bot's private tmpfs folders, seen from outside its mount
    namespace. A folder that is the same filesystem as this process's own (``pid`` not yet in
    its sandbox) or cannot be read counts nothing."""
    total = 0
    for folder in folders:
        try:
            inside = os.stat(f"/proc/{pid}/root{folder}").st_dev
            st = os.statvfs(f"/proc/{pid}/root{folder}")
        except OSError:
            continue
        try:
            if os.stat(folder).st_dev == inside:
                continue
        except OSError:
            pass
        total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def _process_clock(pid: int) -> float | None:
    """The CPU seconds of ``pid`` by the kernel's nanosecond count, or None where there is none
    to read (the process is gone, or not Linux). One call for all its threads, those that
    have ended too: /proc/PID/task/*/schedstat has the same count per live thread only. The
    kernel lets any process read another's CPU clock."""
    try:
        return time.clock_gettime((~pid << 3) | _CPUCLOCK_SCHED)
    except (OSError, AttributeError):
        return None


def process_cpu(pid: int) -> tuple[float, float]:
    """(user, system) seconds of ``pid`` and of the children it has waited for.

    Its own time is the kernel's exact count (``_process_clock``), split in the ratio of the
    user and system clock ticks of /proc/PID/stat: those ticks alone are 10 ms steps, each
    rounded down, so a move's charge from them could be a tick or two off either way. What
    its waited-for children spent is known only in ticks."""
    fields = stat_fields(pid)
    if fields is None or len(fields) < 15:
        return 0.0, 0.0
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    user, system = utime / CLK_TCK, stime / CLK_TCK
    exact = _process_clock(pid)
    if exact is not None:
        ticks = utime + stime
        user, system = (exact * utime / ticks, exact * stime / ticks) if ticks else (exact, 0.0)
    return user + cutime / CLK_TCK, system + cstime / CLK_TCK


class TreeClock:
    """A bot's CPU time where it has no cgroup to count it: user + system seconds of the
    processes of its tree now (threads included, and the children they waited for), by the
    kernel's nanosecond count of each (``process_cpu``). A process that left the tree takes
    its time with it, so a move's charge is never below zero but may miss an orphan's share."""

    __slots__ = ("pid",)

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __call__(self) -> float | None:
        pids = tree([self.pid])
        if not pids:
            return None
        return sum(sum(process_cpu(pid)) for pid in pids)

    def close(self) -> None:
        """Nothing to close: for the same shape as ``cgroups.CpuClock``."""



def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


