"""Resource limits of a bot and what it used: plain values (docs/PROTOCOL.md, "Limits and containment").

``ResourceLimits`` says how much a bot's whole process tree may take (memory, tasks, open
files, file size, network); the launcher (``arena.harness.launcher``) enforces it. ``Usage`` is what
the tree used between two resets (the arena resets at every match start): CPU time (user +
system of every process of the tree, the exited ones too) and peak memory.

Time limits are not here: they are part of the protocol (``botproc.Limits``) and recorded in
every game record as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from arena.errors import ArenaError

MIB = 1 << 20

# key -> (lowest value other than 0, highest value); 0 means "no limit" for every integer key.
_BOUNDS: dict[str, tuple[int, int]] = {
    "memory_mb": (16, 1 << 20),
    "processes": (1, 1 << 20),
    "open_files": (16, 1 << 20),
    "file_size_mb": (1, 1 << 30),
    "cpus": (1, 1024),
}
MAX_WRITABLE = 64  # folders in ``writable``


class ResourceLimitError(ArenaError, ValueError):
    """A resource limit has a value that is not allowed."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class ResourceLimits:
    """What a bot's process tree may use. Integers; 0 means no limit.

    - ``memory_mb``: resident memory of the whole tree (the cgroup's charge where the arena
      can create a memory cgroup, else the sum of the processes' RSS with what its memory
      files and, sealed, its private ``/tmp`` and ``/dev/shm`` hold, measured every 100 ms).
      Over it the bot is killed and fails with ``memory``.
    - ``processes``: tasks (processes and threads) in the tree at once, through the pids
      cgroup; where there is none, a sealed bot of an ordinary user is held to it by
      ``RLIMIT_NPROC`` inside its own user namespace (Linux 5.14 on counts it there, over the
      bot's tasks alone; ``arena.harness.launcher``); otherwise it is not enforced
      (``RLIMIT_NPROC`` counts every process of the user, and nothing for root).
    - ``open_files``: ``RLIMIT_NOFILE`` of each process.
    - ``file_size_mb``: ``RLIMIT_FSIZE``: the largest file a process may write.
    - ``cpus``: how many CPUs' worth of time the whole tree may use at once, however many
      threads or processes it runs (the cgroup's CPU quota, ``cpu.max``; where the machine
      has no cpu controller it is not enforced, and the cpu clock still charges every
      thread's time to the move). 1 by default, so that a bot spinning threads cannot take
      the CPU its opponent is timed on.
    - ``network``: True lets the bot use the network. By default (None) it has none, not even
      the machine's loopback: it runs in a network namespace of its own (its own loopback only),
      where the machine allows one
      (a sealed bot always does); False insists on it (the bot cannot start where the machine
      allows none).
    - ``writable``: folders (relative to the bot's ``cwd``) beneath which its processes may
      change files, besides its own ``TMPDIR`` and ``/dev/shm``: elsewhere Landlock refuses,
      where the kernel has it (``arena.harness.sandbox``).
    """

    memory_mb: int = 1024
    processes: int = 512
    open_files: int = 1024
    file_size_mb: int = 1024
    cpus: int = 1
    network: bool | None = None
    writable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for key in self.keys():
            value = getattr(self, key)
            if not self.valid(key, value):
                raise ResourceLimitError(key, f"expected {self.expected(key)}, got {value!r}")

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @staticmethod
    def valid(key: str, value: Any) -> bool:
        """Whether ``value`` is allowed for the limit ``key``."""
        if key == "network":
            return value is None or isinstance(value, bool)
        if key == "writable":
            return (isinstance(value, tuple) and len(value) <= MAX_WRITABLE
                    and all(isinstance(v, str) and v.strip() and "\0" not in v for v in value))
        low, high = _BOUNDS[key]
        return isinstance(value, int) and not isinstance(value, bool) and (value == 0 or low <= value <= high)

    @staticmethod
    def expected(key: str) -> str:
        """What the limit ``key`` takes, for error messages."""
        if key == "network":
            return "true or false"
        if key == "writable":
            return f"a list of at most {MAX_WRITABLE} folder paths (relative to the bot's cwd)"
        low, high = _BOUNDS[key]
        return f"0 (no limit) or a whole number from {low} to {high}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ResourceLimits:
        data = dict(data or {})
        unknown = sorted(set(data) - set(cls.keys()))
        if unknown:
            raise ResourceLimitError(unknown[0], f"unknown limit (allowed: {', '.join(cls.keys())})")
        if isinstance(data.get("writable"), list):
            data["writable"] = tuple(data["writable"])
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        data = {key: getattr(self, key) for key in self.keys()}
        data["writable"] = list(self.writable)
        return data

    def writable_folders(self, cwd: str | None) -> list[str]:
        """``writable`` as absolute paths: relative ones are taken from ``cwd``."""
        base = cwd or os.getcwd()
        return [os.path.normpath(os.path.join(base, os.path.expanduser(path))) for path in self.writable]

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MIB


@dataclass(frozen=True)
class Usage:
    """What a bot's process tree used since the last reset (a match start).

    ``cpu_s`` is user + system time of every process of the tree, those that exited
    included; ``cpu_s / wall_s`` above 1 means the bot used more than one CPU at a time.
    ``peak_memory_bytes`` is the highest memory of the tree seen: the memory cgroup's
    exact peak on cgroup v1, else the highest of the samples taken every 100 ms (the
    cgroup's charge, or the sum of the processes' RSS). ``source`` is ``cgroup`` or ``proc``
    (where the CPU time comes from), empty when nothing ran.
    """

    cpu_s: float = 0.0
    user_s: float = 0.0
    system_s: float = 0.0
    wall_s: float = 0.0
    peak_memory_bytes: int = 0
    source: str = ""

    @property
    def cpu_per_wall(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def peak_memory_mb(self) -> float:
        return self.peak_memory_bytes / MIB

    def to_dict(self) -> dict[str, Any]:
        """For a record: milliseconds and MB, rounded."""
        return {"cpu_ms": round(self.cpu_s * 1000, 1), "user_ms": round(self.user_s * 1000, 1),
                "system_ms": round(self.system_s * 1000, 1), "wall_ms": round(self.wall_s * 1000, 1),
                "peak_memory_mb": round(self.peak_memory_mb, 1), "source": self.source}

    @classmethod
    def from_launcher(cls, data: Mapping[str, Any] | None) -> Usage:
        if not data:
            return cls()
        return cls(cpu_s=float(data["cpu"]), user_s=float(data["user"]), system_s=float(data["system"]),
                   wall_s=float(data["wall"]), peak_memory_bytes=int(data["peak"]), source=str(data["source"]))
