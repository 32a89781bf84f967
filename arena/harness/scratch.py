"""Temporary folders that outlive no arena: each is named after the process that made it, and
the next arena to make one in the same place removes those whose maker is dead.

An arena removes its temporary folders (a bot's private ``TMPDIR``, a git checkout being
extracted) when it is done with them, and a bot's launcher removes the bot's when the arena
dies first. Killed with ``kill -9`` all together (or the machine reset), nobody does, and the
folders stay for ever. So each folder's name carries its maker:

    escoba-arena-tmp-BOOT.PIDNS.PID.START-LABELrandom

the machine's boot (the first 8 digits of ``/proc/sys/kernel/random/boot_id``), the maker's pid
namespace, pid, and start time (``/proc/PID/stat``, in clock ticks since boot). A pid alone
is no proof of life: pids are reused, and the start time tells the maker from a later process
with its pid. The first folder a process makes in a place sweeps that place (``sweep_once``):
a folder named so is removed when

- it is a folder (not a link: a link planted in ``/tmp`` by someone else is never followed),
  owned by this process's user (another user's arena is none of ours);
- and its maker is known to be dead: made in an earlier boot, or its pid runs no process of
  that start time now (or only a zombie). A maker in another pid namespace (another
  container sharing ``/tmp``) cannot be looked up here: its folders are kept. So are those of
  a process whose start time could not be read when it made them.

Folders of the older naming (``escoba-arena-`` and a random part) say nothing of their maker:
they are left alone. Standard library only, as the rest of the harness the launcher imports.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass

from arena.harness.proctree import read_text, stat_fields

PREFIX = "escoba-arena-tmp-"
_NAME = re.compile(r"escoba-arena-tmp-([0-9a-f]{8})\.(\d+)\.(\d+)\.(\d+)-")
_BOOT_ID = "/proc/sys/kernel/random/boot_id"
_UNKNOWN_BOOT = "0" * 8
_STARTTIME = 19  # field 22 of /proc/PID/stat, counted from the state (field 3)


@dataclass(frozen=True)
class Owner:
    """The process that made a folder, as its name gives it."""

    boot: str  # the first 8 hex digits of the boot id, or zeros when unknown
    pidns: int  # the inode of its pid namespace, 0 when unknown
    pid: int
    start: int  # its start time in clock ticks since boot, 0 when unknown

    @property
    def tag(self) -> str:
        return f"{self.boot}.{self.pidns}.{self.pid}.{self.start}"

    @classmethod
    def parse(cls, name: str) -> Owner | None:
        """The owner a folder's name gives, or None for a name of no such folder."""
        found = _NAME.match(name)
        if found is None:
            return None
        boot, pidns, pid, start = found.groups()
        return cls(boot, int(pidns), int(pid), int(start))

    @classmethod
    def me(cls) -> Owner:
        """This process (read once per process: a forked child is another)."""
        global _mine
        pid = os.getpid()
        if _mine is None or _mine.pid != pid:
            _mine = cls(_boot(), _pid_namespace(), pid, _start_time(stat_fields(pid)))
        return _mine


_mine: Owner | None = None


def _boot() -> str:
    text = (read_text(_BOOT_ID) or "").strip().replace("-", "")[:8].lower()
    return text if re.fullmatch(r"[0-9a-f]{8}", text) else _UNKNOWN_BOOT


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _start_time(fields: list[str] | None) -> int:
    if fields is None or len(fields) <= _STARTTIME or not fields[_STARTTIME].isdigit():
        return 0
    return int(fields[_STARTTIME])


def is_dead(owner: Owner, me: Owner) -> bool:
    """True only when ``owner`` is known to run no more, as seen by ``me`` (this process)."""
    if not owner.start or not me.start:
        return False  # no start time to tell a live maker from a later process with its pid
    if owner.boot != me.boot:
        return owner.boot != _UNKNOWN_BOOT and me.boot != _UNKNOWN_BOOT  # made before a reboot
    if owner.pidns != me.pidns or not owner.pidns:
        return False  # its pid means another process here: it cannot be looked up
    fields = stat_fields(owner.pid)
    if fields is None:
        return True
    return _start_time(fields) != owner.start or fields[0] in ("Z", "X")


def make_folder(base: str | None = None, label: str = "") -> str:
    """A new folder (mode 0700) in ``base`` (default: the temporary folder), named after this
    process; the first made in ``base`` sweeps it first. Raises OSError."""
    base = base or tempfile.gettempdir()
    sweep_once(base)
    return tempfile.mkdtemp(prefix=f"{PREFIX}{Owner.me().tag}-{label}", dir=base)


_swept: set[tuple[int, str]] = set()
_lock = threading.Lock()


def sweep_once(base: str | None = None) -> None:
    """``sweep(base)``, the first time this process asks for ``base``."""
    base = os.path.abspath(base or tempfile.gettempdir())
    key = (os.getpid(), base)  # a forked child sweeps for itself
    with _lock:
        if key in _swept:
            return
        _swept.add(key)
    sweep(base)


def sweep(base: str) -> list[str]:
    """Remove the folders in ``base`` whose maker is dead (the module doc); the names removed.
    Never raises: a folder that cannot be removed now is tried again by the next arena."""
    me = Owner.me()
    if not me.start:
        return []  # without /proc nothing can be told dead
    try:
        names = os.listdir(base)
    except OSError:
        return []
    removed = []
    uid = os.geteuid()
    for name in names:
        owner = Owner.parse(name)
        if owner is None or not is_dead(owner, me):
            continue
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            continue
        try:
            # rmtree refuses a link at ``path`` and, should the folder be swapped for one after
            # the lstat, sees it (it compares the folder it opened with the lstat's): nothing
            # outside is ever removed, and links inside are removed, not followed.
            shutil.rmtree(path)
        except OSError:
            continue
        removed.append(name)
    return removed


__all__ = ["PREFIX", "Owner", "is_dead", "make_folder", "sweep", "sweep_once"]
