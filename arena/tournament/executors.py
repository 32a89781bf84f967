"""Executors: something that plays match specs and hands back finished records, in any order.

The runner only needs ``Executor``: enter it, feed it the pending specs, iterate the
completions, leave it (which stops everything still running). ``LocalExecutor`` plays on
worker processes of this machine; another executor (a Dask cluster) can slot in beside it.

A worker is long-lived: it keeps one process per bot (per copy, for teams of clones)
alive across its matches, and plays one match at a time. A match depends only on its
spec, so the order and the worker it lands on never change its result.
"""

from __future__ import annotations

import os
import queue
import signal
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.tournament.schedule import MatchSpec


class ExecutorError(ArenaError):
    """A match could not be played because of a fault of the arena itself (not of a bot)."""


@dataclass(frozen=True)
class Completed:
    """A finished match as it comes back from a worker: plain, picklable data."""

    spec: MatchSpec
    record: dict[str, Any]  # GameRecord.to_dict()
    duration: float  # wall seconds the worker spent on it
    worker: str


# A match player: (job, spec, worker state) -> record dict. The worker state is created
# once per worker by ``open_state(job, worker_id)`` and closed by ``close_state(state)``.
PlayFn = Callable[[Any, MatchSpec, Any], dict[str, Any]]


@dataclass(frozen=True)
class WorkerPlan:
    """What a worker runs: module-level callables (picklable by reference) and the job data."""

    job: Any
    open_state: Callable[[Any, str], Any]
    play: PlayFn
    close_state: Callable[[Any], None]


class Executor(ABC):
    """Plays specs; yields ``Completed`` as matches finish. Leaving the context stops all work."""

    @abstractmethod
    def __enter__(self) -> Executor: ...

    @abstractmethod
    def __exit__(self, *exc: object) -> None: ...

    @abstractmethod
    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]: ...


class InlineExecutor(Executor):
    """Plays in this process, one match after the other (tests, debugging, concurrency 1 without fork cost)."""

    def __init__(self, plan: WorkerPlan) -> None:
        self._plan = plan
        self._state: Any = None

    def __enter__(self) -> InlineExecutor:
        self._state = self._plan.open_state(self._plan.job, "w0")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._state is not None:
            self._plan.close_state(self._state)
            self._state = None

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        for spec in specs:
            start = time.monotonic()
            record = self._plan.play(self._plan.job, spec, self._state)
            yield Completed(spec, record, time.monotonic() - start, "w0")


# --- local worker processes -------------------------------------------------------------

_READY, _START, _DONE, _FAIL = "ready", "start", "done", "fail"
_MAX_STARTUP_DEATHS = 3
_POLL = 0.5


def _worker_main(plan: WorkerPlan, worker_id: str, tasks: Any, results: Any, parent_pid: int) -> None:
    # Ctrl-C reaches the whole foreground process group; only the parent decides what
    # happens then. SIGTERM from the parent must still run the finally below (bots closed).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    # If the arena dies (kill -9), SIGTERM us too, so the finally below closes the bots.
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != parent_pid:
        return
    # The parent reads every result before it lets a worker go; at any other exit nobody
    # will read, and waiting to flush a record into a full pipe would hang the exit.
    results.cancel_join_thread()
    state = None
    try:
        state = plan.open_state(plan.job, worker_id)
        results.put((_READY, worker_id, "", None, 0.0))
        while True:
            try:
                item = tasks.get(timeout=_POLL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return  # the arena died (kill -9): don't outlive it
                continue
            if item is None:
                return
            spec = MatchSpec.from_dict(item)
            results.put((_START, worker_id, spec.id, None, 0.0))
            start = time.monotonic()
            try:
                record = plan.play(plan.job, spec, state)
            except Exception:
                results.put((_FAIL, worker_id, spec.id, traceback.format_exc(limit=20), 0.0))
                return
            results.put((_DONE, worker_id, spec.id, record, time.monotonic() - start))
    finally:
        if state is not None:
            plan.close_state(state)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _die_with_parent(sig: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG (Linux); elsewhere the ppid poll remains
    except (OSError, AttributeError):
        pass


class LocalExecutor(Executor):
    """``workers`` processes (the ``multiprocess`` package, spawn start), one shared queue of specs."""

    def __init__(self, plan: WorkerPlan, workers: int, *, stop_grace: float = 3.0) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self._plan = plan
        self._n = workers
        self._grace = stop_grace
        self._procs: dict[str, Any] = {}
        self._ctx: Any = None
        self._tasks: Any = None
        self._results: Any = None
        self._serial = 0
        self._finished = False
        self._ready: set[str] = set()
        self._startup_deaths = 0

    def __enter__(self) -> LocalExecutor:
        import multiprocess

        # spawn, not fork: the parent runs a progress-bar thread, and forking a threaded
        # process can deadlock the child.
        self._ctx = multiprocess.get_context("spawn")
        self._tasks = self._ctx.Queue()
        self._results = self._ctx.Queue()
        return self

    def _spawn(self) -> str:
        worker_id = f"w{self._serial}"
        self._serial += 1
        proc = self._ctx.Process(
            target=_worker_main,
            args=(self._plan, worker_id, self._tasks, self._results, os.getpid()),
            name=f"arena-{worker_id}",
            daemon=True,
        )
        proc.start()
        self._procs[worker_id] = proc
        return worker_id

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[Completed]:
        if not specs:
            return
        by_id = {spec.id: spec for spec in specs}
        for spec in specs:
            self._tasks.put(spec.to_dict())
        for _ in range(min(self._n, len(specs))):
            self._spawn()
        running: dict[str, str] = {}  # worker -> match id
        remaining = set(by_id)
        while remaining:
            try:
                kind, worker_id, match_id, payload, duration = self._results.get(timeout=_POLL)
            except queue.Empty:
                self._replace_dead_workers(running, by_id)
                continue
            if kind == _READY:
                self._ready.add(worker_id)
                self._startup_deaths = 0
            elif kind == _START:
                running[worker_id] = match_id
            elif kind == _DONE:
                running.pop(worker_id, None)
                if match_id in remaining:
                    remaining.discard(match_id)
                    yield Completed(by_id[match_id], payload, duration, worker_id)
            else:
                raise ExecutorError(f"match {match_id} failed inside the arena (worker {worker_id}):\n{payload}")
        self._finished = True

    def _replace_dead_workers(self, running: dict[str, str], by_id: dict[str, MatchSpec]) -> None:
        for worker_id, proc in list(self._procs.items()):
            if proc.is_alive():
                continue
            del self._procs[worker_id]
            if worker_id not in self._ready:
                self._startup_deaths += 1
                if self._startup_deaths >= _MAX_STARTUP_DEATHS:
                    raise ExecutorError(
                        f"worker processes die while starting (exit code {proc.exitcode}); "
                        "if you call the runner from a script, guard it with if __name__ == '__main__'"
                    )
            lost = running.pop(worker_id, None)
            if lost is not None:
                # A worker that died mid-match (OOM-killed, say) loses nothing: the match
                # is played again from its seed by a fresh worker.
                self._tasks.put(by_id[lost].to_dict())
            if proc.exitcode not in (0, None) or lost is not None:
                self._spawn()
        # Never wait on a queue nobody serves.
        if not self._procs and running == {}:
            self._spawn()

    def __exit__(self, *exc: object) -> None:
        procs = list(self._procs.values())
        self._procs.clear()
        if not procs:
            return
        if self._finished and exc[0] is None:
            for _ in procs:
                self._tasks.put(None)
        else:
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()  # SIGTERM: the worker closes its bots on the way out
        deadline = time.monotonic() + self._grace
        for proc in procs:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        for q in (self._tasks, self._results):
            q.cancel_join_thread()
            q.close()
