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

import threading
from typing import Any

# What the server imports once, before it forks any worker: everything a worker needs to play.
PRELOAD = ["arena.tournament.worker"]

_lock = threading.Lock()


def context() -> Any:
    """The ``multiprocess`` context whose processes are forks of the preloaded server."""
    import multiprocess

    ctx = multiprocess.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def prestart() -> None:
    """Start the server now, without waiting for its imports: the first worker forked from it
    waits for them, by then mostly done. Safe to call more than once."""
    with _lock:
        from multiprocess import forkserver

        context()
        forkserver.ensure_running()


__all__ = ["PRELOAD", "context", "prestart"]
