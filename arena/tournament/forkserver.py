"""Where local worker processes come from: a fork server that has imported what a worker runs.

A spawned worker is a new Python that imports the arena (and runs the ``arena`` script again)
before it can play: about half a second of CPU each, paid again by every worker and every
replacement of a lost one. The fork server is one such Python, started once per run as early as
the command line knows it will play (``prestart``, before its own imports, so the two overlap);
each worker is a fork of it, ready at once. The server is single-threaded (forking it is safe,
unlike forking the arena, which runs threads), ignores Ctrl-C as the workers do, and exits when
the arena does (the ``multiprocess`` package's forkserver: its "alive" pipe ends with the arena).
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from typing import Any

# What the server imports once, before it forks any worker: everything a worker needs to play.
PRELOAD = ["arena.tournament.worker"]

_lock = threading.Lock()
_tempdir_chosen = False

# The server listens on a Unix socket at TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX, and a socket's
# path holds at most 107 bytes: under a deep TMPDIR (a test's folder, a CI runner's work area)
# binding it fails and no worker starts. Python 3.14 falls back to a short folder in that case;
# this does the same for the Pythons before it.
_SOCKET_PATH_MAX = 107
_SOCKET_SUFFIX = len("/pymp-XXXXXXXX/listener-XXXXXXXX")
_SHORT_TEMPDIRS = ("/tmp", "/var/tmp", "/dev/shm")


def _short_enough(folder: str) -> bool:
    return len(os.fsencode(folder)) + _SOCKET_SUFFIX <= _SOCKET_PATH_MAX


def _choose_tempdir() -> None:
    """Make the ``multiprocess`` package's private temp folder (which holds the socket) one
    whose path leaves room for the socket's name. Only the server's socket lives there; the
    bots' folders follow TMPDIR as before."""
    global _tempdir_chosen
    if _tempdir_chosen:
        return
    _tempdir_chosen = True
    if _short_enough(tempfile.gettempdir()):
        return
    short = next(
        (d for d in _SHORT_TEMPDIRS if _short_enough(d) and os.access(d, os.W_OK | os.X_OK)), None
    )
    if short is None:
        return
    from multiprocess import util

    before, tempfile.tempdir = tempfile.tempdir, short
    try:
        util.get_temp_dir()  # created now, under the short folder, and remembered for the run
    finally:
        tempfile.tempdir = before


def context() -> Any:
    """The ``multiprocess`` context whose processes are forks of the preloaded server."""
    import multiprocess

    ctx = multiprocess.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    with _lock:
        _choose_tempdir()  # before the server binds its socket
        try:
            _ensure_running()  # here if not already, rather than by the first worker's start
        except OSError:
            pass  # the first worker's start tries again, and reports there
    return ctx


# Ctrl-C reaches the whole foreground process group. The server ignores it once it runs, but it
# starts as a new Python, and a Ctrl-C during that Python's own start and its imports printed
# Python's traceback (``init_import_site ... KeyboardInterrupt``) under the arena's one line. So
# it is started with the signal blocked, as the package's resource tracker is: a blocked signal
# stays blocked across fork and exec, and one sent meanwhile is left pending for this process,
# whose handler then takes it. The server keeps it blocked (it ignores it anyway); its workers
# unblock it once they ignore it too (``worker_starts``). The tracker, which the server's start
# starts first, is started before the block: its start unblocks the signal on its way out.
_STARTED_DEAF = {signal.SIGINT}


# The server is started as ``python -c ...``, which puts the current folder first on its import
# path, and it imports what a worker runs before the arena's own path can reach it (the package
# passes that path along but its server never applies it): run from a folder holding an
# ``arena/`` folder, or a ``random.py`` of a bot author's, every worker imported those instead
# of the arena's and the stdlib's (an internal error, or worse, a worker running other code).
# Python 3.11's PYTHONSAFEPATH keeps the folder off the path; it is set for the server's start
# only, with a mark, and its workers take both away again (``worker_starts``), so that neither
# reaches a bot, whose scripts import their own folder's modules.
_SAFE_PATH = "PYTHONSAFEPATH"
_SAFE_PATH_MARK = "ESCOBA_ARENA_SAFE_PATH_SET"


def _ensure_running() -> None:
    from multiprocess import forkserver, resource_tracker

    marked = _SAFE_PATH not in os.environ
    if marked:
        os.environ[_SAFE_PATH] = os.environ[_SAFE_PATH_MARK] = "1"
    try:
        resource_tracker.ensure_running()  # a `python -c` too, which imports what the package needs
        before = signal.pthread_sigmask(signal.SIG_BLOCK, _STARTED_DEAF)
        try:
            forkserver.ensure_running()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    finally:
        if marked:
            os.environ.pop(_SAFE_PATH, None)
            os.environ.pop(_SAFE_PATH_MARK, None)


def worker_starts() -> None:
    """In a worker, once it ignores Ctrl-C: what it inherited from the server's start goes (the
    blocked signal, the safe path), so that its launcher and bots start as any other process."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STARTED_DEAF)
    if os.environ.pop(_SAFE_PATH_MARK, None) is not None:
        os.environ.pop(_SAFE_PATH, None)


def prestart() -> None:
    """Start the server now, without waiting for its imports: the first worker forked from it
    waits for them, by then mostly done. Safe to call more than once."""
    context()


def let_server_go() -> None:
    """In a worker: close this process's copy of the server's "alive" pipe. Each fork of the
    server inherits one (so that it could start processes through the server in turn, which a
    worker never does), and the server exits only once every copy is closed: a worker kept it
    alive after ``kill -9`` of the arena, the worker waited for the server's end to end itself
    (``die_with_parent``), and both lasted as long as the move a bot was thinking over (up to
    its ``move_ms``), the bots with them."""
    from multiprocess import forkserver

    server = forkserver._forkserver
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is None:
        return
    server._forkserver_alive_fd = None
    try:
        os.close(fd)
    except OSError:
        pass


__all__ = ["PRELOAD", "context", "let_server_go", "prestart", "worker_starts"]
