"""What a bot may touch outside its own process tree, enforced with Landlock (Linux).

A bot runs as the user who runs the arena, so without this it could write the results store,
replace another bot's program, or signal and read the memory of its opponent (a ``SIGSTOP``
is enough to make it lose on time). Each bot is put in a Landlock domain of its own just
before ``exec``, which it and its descendants keep:

- **files**: it may create, change and delete files only beneath its ``TMPDIR`` (a fresh
  folder of its own, removed with it), ``/dev/shm`` and the folders its configuration names
  as ``writable``; it may write the harmless devices (``/dev/null`` ...). Not the rest of
  ``/tmp``: a project cloned there, the arena's own code or another bot's program, must not
  be the bot's to change. Reading is not restricted: a bot needs its interpreter, libraries
  and data wherever they are.
- **secrets**: paths the arena names as hidden (the tournament's file, its results folder, and
  the git folder of the repository holding that file: the seed, from which every deal
  follows, and the records of deals a bot may meet again in a duplicate game) cannot be
  read, listed or changed. Landlock grants rights beneath folders, so "everything but these"
  is granted as the entries of each folder on the way down to a hidden path, one by one
  (``_around``): a file created later right beside a hidden path's parents is not readable.
- **processes** (Landlock ABI 6, Linux 6.12): it may signal only processes of its own tree,
  and connect only to abstract Unix sockets of its own tree. At every ABI, Landlock forbids
  tracing a process outside the domain, which covers reading ``/proc/PID/mem``, ``cwd`` and
  ``root`` of the arena or of another bot (not ``cmdline`` or ``environ``, which stay readable).

``no_new_privs`` is set first (Landlock requires it): a set-user-ID program the bot starts
does not gain privileges. Where the kernel has no Landlock (before 5.13, or not enabled), the
launcher says so in its description and bots run without these limits.

Unsealed, a bot's build (``build:``) is not confined: it runs as the user, like any build command the
user chooses to run. Standard library only: the launcher imports this module
(``arena.harness.launcher``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import tempfile
from collections.abc import Iterable
from typing import Any

from arena.harness.scratch import make_folder
from arena.harness.seal import within

# Linux system call numbers of Landlock: the same on every architecture (the unified table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1

# Filesystem access rights (include/uapi/linux/landlock.h), by the ABI that introduced them.
# Those that change the filesystem are always handled; reading only when paths are hidden;
# executing never.
_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR, _MAKE_DIR, _MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = (1 << n for n in range(6, 13))
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV  # what a rule on a file may carry
_READ = _READ_FILE | _READ_DIR
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6
_SCOPED_ABI = 6

# Set to "off" in the arena's environment to run bots outside Landlock, as on a kernel without
# it: for tests of what a bot can then do, and for a bot that must write elsewhere.
LANDLOCK_ENV = "ESCOBA_ARENA_LANDLOCK"
# Shared memory (POSIX semaphores and shm_open, as Python's multiprocessing uses them) has no
# per-process folder: it stays writable. Temporary files go to the bot's own TMPDIR.
SHARED_MEMORY = "/dev/shm"
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


def c_library() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - not a C runtime we know
        return None


def die_with_parent(parent: int, sig: int = signal.SIGKILL, libc: Any = None) -> bool:
    """In a process just forked from ``parent``: be sent ``sig`` when the parent dies, even by
    ``kill -9`` (``PR_SET_PDEATHSIG``, Linux; elsewhere nothing is asked). False when the parent
    died before that took hold: the caller ends at once."""
    libc = libc if libc is not None else c_library()
    try:
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (AttributeError, OSError):  # no prctl: not Linux
        pass
    return os.getppid() == parent


def become_subreaper(libc: Any = None) -> bool:
    """Make this process a child subreaper (``PR_SET_CHILD_SUBREAPER``): an orphan among its
    descendants is re-parented to it, not to init. False where the kernel refuses."""
    libc = libc if libc is not None else c_library()
    try:
        return libc is not None and libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (AttributeError, OSError):
        return False


def abi(libc: Any = None) -> int:
    """The Landlock ABI version this kernel offers, 0 where it has none."""
    libc = libc if libc is not None else c_library()
    if libc is None:
        return 0
    try:
        version = int(libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)))
    except (AttributeError, OSError):
        return 0
    return max(version, 0)


def switched_off(variable: str = LANDLOCK_ENV) -> bool:
    """Whether the arena's environment turns a part of the containment off (Landlock, or
    another switch given by its variable)."""
    return os.environ.get(variable, "").lower() in ("off", "0", "no", "false")


def confines_signals(version: int) -> bool:
    """Whether bots confined at this ABI can signal only their own tree (scoped signals)."""
    return version >= _SCOPED_ABI


def describe(version: int) -> str:
    """The launcher's words for what bots are kept from, at this ABI."""
    if version < 1:
        return "no Landlock (bots may write the user's files and signal other processes)"
    words = (f"Landlock ABI {version}: writes only in its own TMPDIR, /dev/shm and writable folders, the "
             "tournament's file, results and git folder unreadable, no tracing out of its tree")
    if confines_signals(version):
        return words + ", no signals out of its tree"
    return words + " (signals not confined before ABI 6, Linux 6.12)"


def _handled(version: int) -> int:
    rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK
    rights |= _MAKE_FIFO | _MAKE_BLOCK | _MAKE_SYM
    if version >= 2:
        rights |= _REFER
    if version >= 3:
        rights |= _TRUNCATE
    return rights


def writable_folders(env: dict[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The folders beneath which a bot may change files: its ``TMPDIR`` (a fresh folder of its
    own, ``private_temporary``), shared memory, and ``extra`` (its configuration's ``writable``).
    Not the whole of ``/tmp``: what a bot leaves there would outlive it, and a project cloned
    there (the arena, the other bots' programs) would be the bot's to change."""
    folders = [env.get("TMPDIR") or tempfile.gettempdir(), SHARED_MEMORY]
    folders.extend(extra)
    return folders


def rules(version: int, folders: Iterable[str], hidden: Iterable[str] = ()) -> dict[str, int]:
    """The Landlock rules of a bot: the rights granted beneath each path. Writing beneath
    ``folders`` and the harmless devices; with ``hidden`` paths, also reading everything but
    them (reading is not handled at all without)."""
    secret = [os.path.realpath(path) for path in hidden]
    write = _handled(version)
    granted: dict[str, int] = {}
    if secret:
        for path in _around("/", secret, set()):
            granted[path] = granted.get(path, 0) | _READ
    for folder in folders:
        for path in _around(folder, secret, set()):
            granted[path] = granted.get(path, 0) | write
    for device in DEVICES:
        granted[device] = granted.get(device, 0) | (_WRITE_FILE | _TRUNCATE) & write
    return granted


def _around(top: str, secret: list[str], seen: set[str]) -> Iterable[str]:
    """Paths whose hierarchies hold everything beneath ``top`` except the ``secret`` ones."""
    top = os.path.realpath(top)  # a link is judged by where it leads
    if top in seen or any(within(top, path) for path in secret):
        return
    seen.add(top)
    if not any(within(path, top) for path in secret):
        yield top
        return
    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        yield from _around(os.path.join(top, name), secret, seen)


def private_temporary(env: dict[str, str]) -> str | None:
    """A fresh folder for a bot process's temporary files, to be its ``TMPDIR``: what it leaves
    there (a bot killed mid-write, one that never cleans up) is removed with it, and with
    Landlock it can make files there even when its temporary folder holds a hidden path, such
    as a results folder in ``/tmp`` (``_around``). None if no folder can be made (the bot
    keeps the ``TMPDIR`` it had). The caller removes it; should nobody (the arena and the
    launcher killed together), the next arena does (``arena.harness.scratch``)."""
    try:
        return make_folder(env.get("TMPDIR") or tempfile.gettempdir())
    except OSError:
        return None


def confine(version: int, folders: Iterable[str], hidden: Iterable[str] = (), libc: Any = None) -> None:
    """Put the calling process in a new Landlock domain (see the module doc). Raises OSError.

    Meant for a child between fork and exec: the domain cannot be left, and is inherited.
    """
    libc = libc if libc is not None else c_library()
    if libc is None or version < 1:
        raise OSError(38, "Landlock is not available")
    granted = rules(version, folders, hidden)
    handled = _handled(version) | (_READ if any(rights & _READ for rights in granted.values()) else 0)
    # struct landlock_ruleset_attr: handled_access_fs, handled_access_net, scoped (u64 each);
    # the size given tells the kernel which fields this caller knows.
    if confines_signals(version):
        attr = struct.pack("=QQQ", handled, 0, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
    else:
        attr = struct.pack("=Q", handled)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = int(libc.syscall(_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)))
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    try:
        for path, rights in granted.items():
            _allow(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if int(libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(libc: Any, ruleset: int, path: str, rights: int) -> None:
    """Grant ``rights`` beneath ``path``; a path that does not exist is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS  # the kernel refuses directory rights on a file
        # struct landlock_path_beneath_attr (packed): allowed_access u64, parent_fd s32.
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if int(libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), rule,
                            ctypes.c_uint32(0))) != 0:
            _fail(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _fail(call: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{call}: {os.strerror(code)}")
