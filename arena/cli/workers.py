"""Worker processes for a command's work on many items, answered in order: the report's and
``arena verify``'s checks of a results folder's records, the analyst's decisions.

They are forks of the command (they start with the arena imported), in the standard library's
process pool, because it notices a worker's death: a worker killed (by the kernel short of
memory, by a user) ends the command with ``WorkerLost`` and its one line. ``multiprocess``'s
``Pool``, used here before, started another worker and waited for ever for the work the dead
one held. (Tournament matches have their own executors: arena/tournament/executors.py.)
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

from arena.errors import ArenaError, ExitCode
from arena.match import collector

T = TypeVar("T")
R = TypeVar("R")


class WorkerLost(ArenaError):
    """A worker process of the command died before it answered (killed, or out of memory)."""

    exit_code = ExitCode.FAULT


def _lost(what: str) -> WorkerLost:
    return WorkerLost(f"a worker process {what} died before it answered (killed, or out of memory?); "
                      "run the command again, or with fewer workers")


class Workers:
    """A started pool: ``imap`` maps over items in order, ``call`` runs one function in a worker."""

    def __init__(self, executor: ProcessPoolExecutor, what: str) -> None:
        self._executor = executor
        self._what = what

    def imap(self, function: Callable[[T], R], items: Iterable[T], chunksize: int = 1) -> Iterator[R]:
        """``function`` of each item, in the items' order, ``chunksize`` items sent at a time."""
        try:
            yield from self._executor.map(function, items, chunksize=chunksize)
        except BrokenProcessPool:
            raise _lost(self._what) from None

    def call(self, function: Callable[..., R], *args: Any) -> Callable[[], R]:
        """Start ``function(*args)`` in a worker; the function that waits for its value."""
        future: Future[R] = self._executor.submit(function, *args)

        def result() -> R:
            try:
                return future.result()
            except BrokenProcessPool:
                raise _lost(self._what) from None

        return result


def _start(parent: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    from arena.cli.edge import quiet_worker
    from arena.harness.sandbox import die_with_parent

    # Its pool's queue would never tell a worker that the command died (killed by -9): each
    # worker holds both ends of it.
    if not die_with_parent(parent):
        os._exit(1)
    quiet_worker()
    collector.settle()  # an item's containers are freed together by their counts once it is answered
    if initializer is not None:
        initializer(*initargs)


def _ready() -> None:
    """A first task: it makes the pool fork its workers now (it forks them all at its first)."""


def _stop(executor: ProcessPoolExecutor) -> None:
    # The pool has no public way to stop workers busy with a task before Python 3.14; its
    # shutdown forgets them, so they are taken first.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()  # quiet_worker: SIGTERM ends a worker at once
    for process in processes:
        process.join()


@contextmanager
def worker_pool(workers: int, what: str, initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = ()) -> Iterator[Workers]:
    """``workers`` forks of this process, started now, each running ``initializer(*initargs)``
    first; ``what`` names their work in the error of a lost worker (``WorkerLost``). On the way
    out they finish and go; on an error or a stop (Ctrl-C), they are stopped at once; and they
    die with this process, however it dies."""
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_start,
                                   initargs=(os.getpid(), initializer, initargs))
    try:
        executor.submit(_ready)
        yield Workers(executor, what)
    except BaseException:
        _stop(executor)
        raise
    executor.shutdown(wait=True)


__all__ = ["WorkerLost", "Workers", "worker_pool"]
